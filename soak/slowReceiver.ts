/**
 * The fault campaign's slow webhook receiver: for a window of the traffic, one client's receiver (the flooding
 * client's, the one with the most events) answers every call after 10 s, past a try's 5 s limit, and the campaign measures how long the other webhook
 * clients' events took meanwhile, from their records' change of state to their arrival at the receiver. The promise
 * (docs/behaviour.md, "Webhooks and the event feed"): a slow receiver never delays another client's webhook; judged
 * here as that delay's 95th percentile within 5 s (a few events of the window may meet the campaign's other faults:
 * a SIGKILL, a store call held past its timeout).
 *
 * The receiver is the sandbox one of `npm start` (runner.json); a restart brings a new one, so the fault is put
 * again while the window lasts. Ending the window takes the fault away: the held-back events are delivered later,
 * and the event check (events.ts) still finds every one of them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { quantile } from '../testkit/quantile.ts';

/** How late the slow receiver answers: twice a try's time limit (lib/webhooks/attempt.ts, 5 s). */
export const SLOW_ANSWER_MS = 10_000;

/** The verdict's bound on the other clients' webhook delay (95th percentile). */
export const OTHER_CLIENTS_DELAY_GOAL_SECONDS = 5;

/** An event as the receiver lists it: only what the delay needs. */
export interface TimedHook {
  client: string;
  receivedAt?: string;
  verified?: boolean;
  event: { timestamp?: unknown; data?: { recordId?: unknown; state?: unknown } };
}

/** The other clients' webhook delay while the receiver was slow. */
export interface SlowReceiverFigures {
  /** The slow client, and the window (ISO times; null when it never began). */
  client: string;
  from: string | null;
  to: string | null;
  /** Events of the other webhook clients changed within the window (first arrival of each record's state). */
  events: number;
  p50Seconds: number | null;
  p95Seconds: number | null;
  maxSeconds: number | null;
  /** Whether the 95th percentile is within the goal (true when no event was measured: nothing to judge). */
  kept: boolean;
}

const tenths = (ms: number) => Math.round(ms / 100) / 10;

/**
 * The delay of every other webhook client's event whose change fell within the window: its first verified arrival
 * after the change, per record and state.
 *
 * @example
 * slowReceiverFigures({ received, slowClient: 'example-dealer-test', from, to }).p95Seconds // 0.4
 */
export const slowReceiverFigures = (input: {
  received: TimedHook[];
  slowClient: string;
  from: number;
  to: number;
}): SlowReceiverFigures => {
  const firstArrival = new Map<string, number>();
  for (const hook of input.received) {
    if (hook.client === input.slowClient || hook.verified !== true) continue;
    const changedAt = Date.parse(String(hook.event?.timestamp));
    const arrivedAt = Date.parse(String(hook.receivedAt));
    if (!(changedAt >= input.from && changedAt <= input.to) || Number.isNaN(arrivedAt)) continue;
    const key = `${hook.client} ${String(hook.event.data?.recordId)} ${String(hook.event.data?.state)}`;
    const delay = Math.max(0, arrivedAt - changedAt);
    firstArrival.set(key, Math.min(firstArrival.get(key) ?? delay, delay));
  }
  const delays = [...firstArrival.values()].sort((a, b) => a - b);
  const at = (share: number) => (delays.length === 0 ? null : tenths(quantile(delays, share)));
  const p95Seconds = at(0.95);
  return {
    client: input.slowClient,
    from: new Date(input.from).toISOString(),
    to: new Date(input.to).toISOString(),
    events: delays.length,
    p50Seconds: at(0.5),
    p95Seconds,
    maxSeconds: at(1),
    kept: p95Seconds === null || p95Seconds <= OTHER_CLIENTS_DELAY_GOAL_SECONDS,
  };
};

/** The sandbox receiver's URL of the `npm start` on `dataDir`, if it is up. */
const receiverUrl = async (dataDir: string): Promise<string | undefined> => {
  try {
    const runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as {
      webhookReceiverUrl?: string;
    };
    return runner.webhookReceiverUrl;
  } catch {
    return undefined;
  }
};

/**
 * Makes `client`'s receiver slow until `stop`, putting the fault again on every receiver `npm start` brings up
 * meanwhile (checked every 2 s); `stop` takes it away and answers the window.
 *
 * @example
 * const slow = slowReceiver({ dataDir, client: 'example-dealer-test' });
 * // ... traffic ...
 * const { from, to } = await slow.stop();
 */
export const slowReceiver = (options: { dataDir: string; client: string }) => {
  const from = Date.now();
  let stopped = false;
  const faults = (url: string) => `${url}/hooks/_faults`;
  const keep = async () => {
    const url = await receiverUrl(options.dataDir);
    if (!url) return;
    try {
      const listed = (await (await fetch(faults(url))).json()) as { faults: { client?: string }[] };
      if (listed.faults.some((fault) => fault.client === options.client)) return;
      await fetch(faults(url), {
        method: 'POST',
        body: JSON.stringify({ delayMs: SLOW_ANSWER_MS, count: 1_000_000, client: options.client }),
      });
    } catch {
      // npm start is restarting: the next round puts the fault on the new receiver.
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await keep();
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  })();
  return {
    from,
    stop: async (): Promise<{ from: number; to: number }> => {
      stopped = true;
      await loop;
      const to = Date.now();
      const url = await receiverUrl(options.dataDir);
      if (url) await fetch(faults(url), { method: 'DELETE' }).catch(() => undefined);
      return { from, to };
    },
  };
};
