import type { RecordState } from '../store/statusRecords.ts';

type Moves = Pick<RecordState, 'status' | 'leaseUntil' | 'requeuedAt' | 'updatedAt' | 'acceptedAt' | 'dueAt'>;

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
 * have queued it, and nobody has moved it since: that request marked it `unqueued` (it could not send it: SQS
 * failed, its deadline ran out); or it has ended for sure (`answerBy` passed: its invocation timed out, a 504 from
 * the gateway, before it could mark anything) and the reconciler is not yet due to queue it (`dueAt`, a few
 * minutes after intake: from then on the reconciler queues it, and a repeat hours later adds nothing); or, with an
 * `Idempotency-Key` whose earlier request died without a word (the repeat took the key over). Queued twice, a record
 * is still delivered once (the worker's claim). What this costs: a record whose message waits unreceived in a
 * backlog when its client repeats the request between `answerBy` and `dueAt` gets a second message, which the worker
 * drops; a client retrying at once a request that succeeded adds none.
 *
 * @example
 * leftUnqueued(state, { died: false }, new Date()) // true for an `unqueued` record nobody has moved
 */
export const leftUnqueued = (
  state: Moves & Pick<RecordState, 'unqueued' | 'answerBy'>,
  earlier: { died: boolean },
  now: Date,
): boolean =>
  unmoved(state) &&
  (earlier.died ||
    state.unqueued === true ||
    (state.answerBy !== undefined &&
      Date.parse(state.answerBy) <= now.getTime() &&
      now.getTime() < Date.parse(state.dueAt ?? state.answerBy)));
