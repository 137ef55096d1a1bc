/**
 * A record's story: what the console's timeline needs that the record's other fields do not keep (each delivery
 * attempt with its answer and duration, waits in a hold, redrives and who, each webhook attempt). Kept on the status
 * record itself, written in the writes the service already makes (so it costs bytes, not writes), bounded, and
 * gone with the record. Each entry is stored as one short string (`<type>|<at>|…`): a list of strings costs a
 * quarter of the bytes of a list of maps, which keeps a delivered record within one write unit (bench/costModel.ts).
 * No entry holds personal data: messages are the adapters' redacted error texts (lib/privacy/redaction.ts), and a
 * redrive names the staff member who made it.
 */
import type { RecordStatus } from './types.ts';

/** The delivery side's entries a record keeps (`story`): the oldest are dropped beyond it. */
export const STORY_LIMIT = 40;

/** The webhook attempts a record keeps (`webhookStory`): the oldest are dropped beyond it. */
export const WEBHOOK_STORY_LIMIT = 20;

/** The longest message kept in an entry (the record's `error` keeps the whole text). */
const MESSAGE_LIMIT = 200;

export type { Downstream } from '../types.ts';

import type { Downstream } from '../types.ts';

/** One entry of a record's story, as the console's timeline shows it. */
export type StoryEntry =
  | {
      at: string;
      type: 'attempt';
      downstream: Downstream;
      /** The downstream's HTTP status where its answer named one, else null (a timeout, a refused connection). */
      status: number | null;
      /** The redacted error text of a failed attempt. */
      message?: string;
      durationMs: number;
    }
  | { at: string; type: 'held'; downstream: Downstream; heldSince: string; until?: string }
  | { at: string; type: 'redrive'; by: string }
  | {
      at: string;
      type: 'webhook';
      client: string;
      webhookId: string;
      status: number | null;
      durationMs?: number;
    };

const TYPE_CODES = { attempt: 'a', held: 'h', redrive: 'r', webhook: 'w' } as const;

/**
 * What an entry is read back with: what the record itself says, so that no entry repeats it (its downstream, its
 * client, its id in a webhook id).
 */
export interface StoryContext {
  recordId: string;
  client: string;
  downstream: Downstream;
}

/** A time as epoch milliseconds in base 36 (8 characters until 2059): a third of its ISO form's 24. */
const packTime = (iso: string): string => Date.parse(iso).toString(36);
const unpackTime = (packed: string): string => new Date(Number.parseInt(packed, 36)).toISOString();

const orNull = (text: string | undefined): number | null =>
  text === undefined || text === '' ? null : Number(text);

/**
 * The stored form of an entry: one string, its free text (message, by, webhook id) last so that a `|` in it is kept;
 * times packed, and nothing the record says itself (its downstream, its client; a webhook id of the record's own
 * event keeps only the event's time).
 *
 * @example
 * encodeStoryEntry({ at: '2026-11-22T12:00:01.234Z', type: 'redrive', by: 'operator@example.com' }, context)
 * // 'r|mi7j8c2a|operator@example.com'
 */
export const encodeStoryEntry = (entry: StoryEntry, context: Pick<StoryContext, 'recordId'>): string => {
  const head = `${TYPE_CODES[entry.type]}|${packTime(entry.at)}`;
  switch (entry.type) {
    case 'attempt': {
      const message = (entry.message ?? '').slice(0, MESSAGE_LIMIT);
      return `${head}|${entry.status ?? ''}|${Math.round(entry.durationMs)}${message ? `|${message}` : ''}`;
    }
    case 'held':
      return `${head}|${packTime(entry.heldSince)}|${entry.until ? packTime(entry.until) : ''}`;
    case 'redrive':
      return `${head}|${entry.by}`;
    case 'webhook': {
      const own = `${context.recordId}:`;
      const eventAt = entry.webhookId.startsWith(own) ? entry.webhookId.slice(own.length) : undefined;
      const id = eventAt && !Number.isNaN(Date.parse(eventAt)) ? packTime(eventAt) : `=${entry.webhookId}`;
      const duration = entry.durationMs === undefined ? '' : Math.round(entry.durationMs);
      return `${head}|${entry.status ?? ''}|${duration}|${id}`;
    }
  }
};

/**
 * An entry read back from its stored string, with what its record says; undefined for one this version cannot read.
 *
 * @example
 * decodeStoryEntry('r|mi7j8c2a|operator@example.com', context) // { at, type: 'redrive', by: 'operator@example.com' }
 */
export const decodeStoryEntry = (stored: string, context: StoryContext): StoryEntry | undefined => {
  const [code, packed, ...rest] = stored.split('|');
  const tail = (from: number) => rest.slice(from).join('|');
  const at = unpackTime(packed);
  switch (code) {
    case 'a': {
      const message = tail(2);
      return {
        at,
        type: 'attempt',
        downstream: context.downstream,
        status: orNull(rest[0]),
        ...(message ? { message } : {}),
        durationMs: Number(rest[1]),
      };
    }
    case 'h':
      return {
        at,
        type: 'held',
        downstream: context.downstream,
        heldSince: unpackTime(rest[0]),
        ...(rest[1] ? { until: unpackTime(rest[1]) } : {}),
      };
    case 'r':
      return { at, type: 'redrive', by: tail(0) };
    case 'w': {
      const id = tail(2);
      return {
        at,
        type: 'webhook',
        client: context.client,
        webhookId: id.startsWith('=') ? id.slice(1) : `${context.recordId}:${unpackTime(id)}`,
        status: orNull(rest[0]),
        ...(rest[1] ? { durationMs: Number(rest[1]) } : {}),
      };
    }
    default:
      return undefined;
  }
};

/**
 * A story with entries added, only the newest `limit` kept.
 *
 * @example
 * storyWith(['a|…'], [{ at, type: 'redrive', by: 'operator@example.com' }], { recordId }) // ['a|…', 'r|…']
 */
export const storyWith = (
  story: readonly string[] | undefined,
  entries: readonly StoryEntry[],
  context: Pick<StoryContext, 'recordId'>,
  limit = STORY_LIMIT,
): string[] => [...(story ?? []), ...entries.map((entry) => encodeStoryEntry(entry, context))].slice(-limit);

/**
 * The HTTP status a downstream's (redacted) answer text names (`HTTP 503…`), or null.
 *
 * @example
 * statusNamedIn('HTTP 503 to the whole $batch') // 503
 */
export const statusNamedIn = (text: string | undefined): number | null => {
  const found = /\bHTTP (\d{3})\b/.exec(text ?? '');
  return found ? Number(found[1]) : null;
};

/** Whether a state is final for the timeline (anything but `accepted`). */
export const isFinal = (state: RecordStatus): boolean => state !== 'accepted';
