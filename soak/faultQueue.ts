/**
 * What the campaign knows of the faults waiting in one sandbox: a sandbox takes its queued faults in order, one per
 * request of their kind, so the campaign follows them by watching the requests arrive (chaos.ts).
 *
 * It also spaces the faults that fail a whole call (a 5xx, a dropped connection, a lost answer, a failed token or
 * CSRF fetch: every record in the call fails): one waits at a time, and the next only after a delivery call that
 * met none. So the downstream answers between any two of them, as a live system does: with OUTAGE_AFTER_FAILURES 3,
 * single calls failed back to back would hold a downstream that is up, by the rule, and slow the whole campaign. (One
 * batched call that fails whole still opens a hold, as it counts once per record it carried; holdFigures.ts tells
 * those from holds opened on answers by the call that opened them.)
 */

/** The requests a queued fault waits for: a single delivery, a batched one ($batch, Collections), a token fetch. */
export type CallKind = 'single' | 'batched' | 'fetch';

export interface FaultQueue {
  /** A fault was queued in the sandbox for the next request of `kind`; `failsCall`: it fails the whole call. */
  planted(kind: CallKind, failsCall: boolean): void;
  /** A request of `kind` reached the sandbox: it took the oldest fault of its kind, if one waited. */
  observe(kind: CallKind): void;
  /** Faults of `kind` waiting (all kinds without one). */
  waiting(kind?: CallKind): number;
  /** Whether a whole-call failure may be planted now: none waits, and a delivery call met none since the last. */
  mayFailCall(): boolean;
}

/**
 * Creates the campaign's picture of one sandbox's queued faults, empty.
 *
 * @example
 * const queue = createFaultQueue();
 * queue.planted('single', true);
 * queue.mayFailCall(); // false: one waits
 * queue.observe('single'); // the call that took it failed
 * queue.mayFailCall(); // false: no call has met none since
 * queue.observe('batched');
 * queue.mayFailCall(); // true
 */
export const createFaultQueue = (): FaultQueue => {
  const queues: Record<CallKind, boolean[]> = { single: [], batched: [], fetch: [] };
  // Delivery calls since the last one that failed by a planted fault (1: as if one had answered, at the start).
  let cleanCalls = 1;
  return {
    planted(kind, failsCall) {
      queues[kind].push(failsCall);
    },
    observe(kind) {
      const failed = queues[kind].shift() ?? false;
      // A failed fetch fails the delivery call that needed the token: that call never reaches the sandbox.
      if (failed) cleanCalls = 0;
      else if (kind !== 'fetch') cleanCalls++;
    },
    waiting: (kind) =>
      kind ? queues[kind].length : queues.single.length + queues.batched.length + queues.fetch.length,
    mayFailCall: () =>
      cleanCalls > 0 &&
      !queues.single.includes(true) &&
      !queues.batched.includes(true) &&
      !queues.fetch.includes(true),
  };
};
