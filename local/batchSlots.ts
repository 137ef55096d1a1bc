/**
 * How many batches the local pollers hand the worker at once: Lambda's SQS event source runs up to its
 * `maximumConcurrency` invocations at the same time, so a batch starts whenever fewer are in flight, not only
 * after the last one has ended. A held downstream's probe (the gate let a batch through while its `held()` says so)
 * goes alone: the batches already in flight end first, and none starts beside it.
 */
import type { ReceiveGate } from './sqsBatch.ts';

/** The slots of one poller. */
export interface BatchSlots {
  /** Whether a batch may start now: fewer than the cap in flight, and none in flight while the downstream is held. */
  free(): boolean;
  /** Resolves when a batch in flight ends (at once when none is). */
  oneEnded(): Promise<void>;
  /**
   * Asks the gate: 0 to start a batch now, else how long to wait. When it lets a held downstream's probe through,
   * it first waits for the batches in flight to end, so that the probe goes alone.
   */
  admit(): Promise<number>;
  /** Runs one batch in a slot until `work` settles; a rejection goes to `onError`. */
  start(work: () => Promise<unknown>): void;
  /** Batches in flight. */
  inFlight(): number;
  /** Resolves once no batch is in flight. */
  drained(): Promise<void>;
}

/**
 * Slots for up to `maximumConcurrency` batches at once (default 1, at least 1).
 *
 * @example
 * const slots = batchSlots({ maximumConcurrency: 2, gate });
 * if (slots.free() && (await slots.admit()) === 0) slots.start(() => invokeBatch(options, batch));
 * await slots.drained();
 */
export const batchSlots = (options: {
  maximumConcurrency?: number;
  gate?: ReceiveGate;
  onError?: (error: unknown) => void;
}): BatchSlots => {
  const limit = Math.max(1, Math.floor(options.maximumConcurrency ?? 1));
  const running = new Set<Promise<void>>();
  const held = () => options.gate?.held?.() ?? false;
  return {
    free: () => running.size < limit && !(held() && running.size > 0),
    oneEnded: () => (running.size === 0 ? Promise.resolve() : Promise.race(running)),
    admit: async () => {
      const waitMs = options.gate ? await options.gate() : 0;
      // The hold began while batches were in flight: the probe waits for them.
      if (waitMs === 0 && held()) await Promise.all(running);
      return waitMs;
    },
    start: (work) => {
      const run: Promise<void> = Promise.resolve()
        .then(work)
        .then(
          () => undefined,
          (error: unknown) => options.onError?.(error),
        )
        .finally(() => running.delete(run));
      running.add(run);
    },
    inFlight: () => running.size,
    drained: async () => {
      while (running.size > 0) await Promise.all(running);
    },
  };
};
