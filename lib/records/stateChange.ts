import type { PendingEvent, RecordStatus, StatusRecord } from './types.ts';

/** What a record changes to. */
export interface StateChange {
  state: RecordStatus;
  attempts: number;
  /** The change's place among the record's changes (see {@link nextSequenceOf}). */
  sequence: number;
  at: Date;
  downstreamId?: string;
  error?: string;
}

/**
 * The sequence number of a record's next change of state: one more than its last (`eventSequence`). A record
 * settled before changes were numbered counts its earlier changes from its history (each settling step and each
 * redrive was one).
 *
 * @example
 * nextSequenceOf({ eventSequence: 2, history: [] }) // 3
 */
export const nextSequenceOf = (record: Pick<StatusRecord, 'eventSequence' | 'history'>): number =>
  (record.eventSequence ??
    (record.history ?? []).filter((step) => step.status !== 'accepted' || step.redriven).length) + 1;

/**
 * The id of the record's latest event (its latest change of state: `<recordId>:<at>`, lib/events/stateChange.ts),
 * which is the `webhook-id` its webhook was sent with; undefined before any change. A change is a settling step or a
 * redrive of its history, as {@link nextSequenceOf} counts them.
 *
 * @example
 * lastEventIdOf(record) // '3f0c…:2026-11-22T08:03:12.345Z'
 */
export const lastEventIdOf = (record: Pick<StatusRecord, 'id' | 'history'>): string | undefined => {
  const last = (record.history ?? []).filter((step) => step.status !== 'accepted' || step.redriven).at(-1);
  return last ? `${record.id}:${last.at}` : undefined;
};

/**
 * A change of state as the record's outbox keeps it, until the event is made of it (lib/events/stateChange.ts eventOf).
 *
 * @example
 * const pending = pendingChangeOf(claimed, { state: 'delivered', attempts: 1, at, downstreamId: '4900000017' });
 */
export const pendingChangeOf = (before: Pick<StatusRecord, 'status'>, change: StateChange): PendingEvent => {
  const pending: PendingEvent = {
    state: change.state,
    previousState: before.status,
    attempts: change.attempts,
    sequence: change.sequence,
    at: change.at.toISOString(),
  };
  if (change.downstreamId) pending.downstreamId = change.downstreamId;
  if (change.error) pending.error = change.error;
  return pending;
};
