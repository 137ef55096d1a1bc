import type { BatchItem, DeliveryOutcome } from './types.ts';

/**
 * Whether one call's outcomes are a failure of the whole call: the adapters give every record of such a call the
 * same transient outcome object.
 *
 * @example
 * failedWhole(new Map([['r1', down], ['r2', down]])) // down
 */
export const failedWhole = (outcomes: ReadonlyMap<string, DeliveryOutcome>): DeliveryOutcome | undefined => {
  const distinct = new Set(outcomes.values());
  const [only] = distinct;
  return distinct.size === 1 && only?.kind === 'transient' ? only : undefined;
};

/**
 * The one outcome shared by the records not sent because an earlier call of the same delivery failed as a whole:
 * transient, `notSent` (it spends no attempt and teaches the outage hold nothing), naming the earlier failure.
 *
 * @example
 * notSentAfter({ kind: 'transient', error: 'HTTP 503', reachedDownstream: true })
 * // { kind: 'transient', error: 'not sent: an earlier call of this delivery failed (HTTP 503)', reachedDownstream: false, notSent: true }
 */
export const notSentAfter = (failure: DeliveryOutcome): DeliveryOutcome => ({
  kind: 'transient',
  error: `not sent: an earlier call of this delivery failed (${failure.kind === 'transient' ? failure.error : ''})`,
  reachedDownstream: false,
  notSent: true,
});

/**
 * Sends `items` in calls of at most `size`, one after another, and gathers every record's outcome. After a call that
 * failed as a whole (the downstream down, the allowance spent), the later calls are not made: their records get one
 * shared transient outcome marked `notSent`, which spends no attempt and teaches the outage hold nothing. So a
 * worker's probe of a held downstream is one call, not one per chunk, and a downstream that is down is not asked
 * again within the same delivery.
 *
 * @example
 * const outcomes = await inChunks(items, 50, async (chunk) => (await deliverRegistrationBatch(context, chunk)).outcomes);
 */
export const inChunks = async <R>(
  items: readonly BatchItem<R>[],
  size: number,
  call: (chunk: BatchItem<R>[]) => Promise<ReadonlyMap<string, DeliveryOutcome>>,
): Promise<Map<string, DeliveryOutcome>> => {
  const outcomes = new Map<string, DeliveryOutcome>();
  for (let start = 0; start < items.length; start += size) {
    const chunkOutcomes = await call(items.slice(start, start + size));
    for (const [id, outcome] of chunkOutcomes) outcomes.set(id, outcome);
    const failure = failedWhole(chunkOutcomes);
    if (failure && start + size < items.length) {
      const notSent = notSentAfter(failure);
      for (const { id } of items.slice(start + size)) outcomes.set(id, notSent);
      break;
    }
  }
  return outcomes;
};
