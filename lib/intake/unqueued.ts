import type { RecordState } from '../store/statusRecords.ts';

type Moves = Pick<RecordState, 'status' | 'leaseUntil' | 'requeuedAt' | 'updatedAt' | 'acceptedAt'>;

/**
 * Whether nobody has moved a stored record since its intake: still `accepted`, no worker ever claimed it (no
 * `leaseUntil`), the reconciler never queued it again (no `requeuedAt`), no try, hold or redrive changed it
 * (`updatedAt` is still `acceptedAt`). Such a record may be unqueued, or its message may wait on the queue
 * unreceived (a backlog, a held downstream).
 *
 * @example
 * unmoved(state) // false once a worker has claimed it
 */
export const unmoved = (state: Moves): boolean =>
  state.status === 'accepted' &&
  state.leaseUntil === undefined &&
  state.requeuedAt === undefined &&
  state.updatedAt === state.acceptedAt;

/**
 * Whether a repeat of a request must queue a record it finds, because an earlier request stored it and may never
 * have queued it: that request marked it `unqueued` (it could not send it: SQS failed, its deadline ran out) and
 * nobody moved it since; or, with an `Idempotency-Key` whose earlier request died without a word (the repeat took
 * the key over), any record nobody moved since. A record whose request died before it could mark it, without a
 * key, is queued by the reconciler within minutes. Queued twice, a record is still delivered once (the worker's
 * claim); a record queued as it was stored is not queued again by a repeat, so a client retrying a request that
 * succeeded adds no message.
 *
 * @example
 * leftUnqueued(state, { died: false }) // true for an `unqueued` record nobody has moved
 */
export const leftUnqueued = (
  state: Moves & Pick<RecordState, 'unqueued'>,
  earlier: { died: boolean },
): boolean => unmoved(state) && (earlier.died || state.unqueued === true);
