/**
 * The soak's check of the event feed (GET /events, lib/feed): after the campaign, each client pages through its own
 * feed with the cursor, and every settled record must be listed with its final state as the entry of its highest
 * `data.sequence`; an entry of a record another client owns is a leak. Copies of an entry (a re-publish) are allowed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Service } from './service.ts';

/** One feed entry: what the check reads of it. */
export interface FeedEntry {
  id: string;
  data: { recordId: string; state: string; sequence: number };
}

export interface FeedCounts {
  /** Settled records (of every client) the feed must list with their final state. */
  feedExpected: number;
  /** Of those, records whose highest-sequence entry is missing or not the final state. */
  feedMismatched: number;
  /** Entries in a client's feed of a record it does not own. */
  feedForeign: number;
  /** Entries read in all. */
  feedEntries: number;
}

/** What the check found: the counts, the ids still wrong, and a few examples for the report. */
export interface FeedCheck {
  counts: FeedCounts;
  mismatched: Set<string>;
  examples: string[];
}

/** Every entry of a client's feed, page by page (100 each) with the cursor; retries no answer and 5xx a few times. */
export const readFeed = async (service: Service, client: string): Promise<FeedEntry[]> => {
  const entries: FeedEntry[] = [];
  let after: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '100', ...(after ? { after } : {}) });
    let page: { events: FeedEntry[]; next: string | null } | undefined;
    for (let attempt = 1; attempt <= 5 && !page; attempt++) {
      await service.whenUp();
      try {
        const response = await fetch(`${service.url}/events?${query}`, {
          headers: { 'x-api-key': service.keys()[client] },
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status === 200) page = JSON.parse(text);
        else if (response.status < 500) throw new Error(`GET /events answered ${response.status}: ${text}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('GET /events answered')) throw error;
      }
      if (!page) await sleep(500 * attempt);
    }
    if (!page) throw new Error(`GET /events of ${client}: no answer`);
    entries.push(...page.events);
    after = page.next;
  } while (after);
  return entries;
};

/**
 * Compares the feeds with the records' final states.
 *
 * @example
 * checkFeed({ settled: new Map([['3f0c…', { owner: 'example-dealer', state: 'delivered' }]]), feeds })
 */
export const checkFeed = (input: {
  /** Every settled record: its owner and final state. */
  settled: Map<string, { owner: string; state: string }>;
  /** Owner of every record the store holds (to tell a foreign entry). */
  owners: Map<string, string>;
  feeds: Map<string, FeedEntry[]>;
}): FeedCheck => {
  const latest = new Map<string, FeedEntry>();
  let foreign = 0;
  let entries = 0;
  const examples: string[] = [];
  for (const [client, feed] of input.feeds) {
    entries += feed.length;
    for (const entry of feed) {
      const owner = input.owners.get(entry.data.recordId);
      if (owner !== undefined && owner !== client) {
        foreign++;
        if (examples.length < 5) examples.push(`${client}'s feed lists ${entry.data.recordId} of ${owner}`);
        continue;
      }
      const seen = latest.get(entry.data.recordId);
      if (!seen || entry.data.sequence > seen.data.sequence) latest.set(entry.data.recordId, entry);
    }
  }
  const mismatched = new Set<string>();
  for (const [id, { state }] of input.settled) {
    const entry = latest.get(id);
    if (entry?.data.state === state) continue;
    mismatched.add(id);
    if (examples.length < 10)
      examples.push(
        `${id}: final state ${state}, feed says ${entry ? `${entry.data.state} (sequence ${entry.data.sequence})` : 'nothing'}`,
      );
  }
  return {
    counts: {
      feedExpected: input.settled.size,
      feedMismatched: mismatched.size,
      feedForeign: foreign,
      feedEntries: entries,
    },
    mismatched,
    examples,
  };
};

/** Whether the feed kept its promise: every final state listed, no foreign entry. */
export const feedKept = (counts: FeedCounts): boolean =>
  counts.feedMismatched === 0 && counts.feedForeign === 0;

/**
 * Reads every client's feed until it lists every settled record's final state, or none of the missing came for
 * `waitMs` (an event a SIGKILL left in an outbox reaches the feed when the reconciler publishes it, after a minute).
 *
 * @example
 * const { counts } = await feedUntilComplete(service, ['example-dealer'], settled, owners, 90_000);
 */
export const feedUntilComplete = async (
  service: Service,
  clients: readonly string[],
  settled: Map<string, { owner: string; state: string }>,
  owners: Map<string, string>,
  waitMs: number,
): Promise<FeedCheck> => {
  let lastMissing = Number.POSITIVE_INFINITY;
  let lastProgress = Date.now();
  for (;;) {
    const feeds = new Map<string, FeedEntry[]>();
    for (const client of clients) feeds.set(client, await readFeed(service, client));
    const check = checkFeed({ settled, owners, feeds });
    if (check.mismatched.size < lastMissing) {
      lastMissing = check.mismatched.size;
      lastProgress = Date.now();
    }
    if (check.mismatched.size === 0 || Date.now() - lastProgress >= waitMs) return check;
    await sleep(5_000);
  }
};
