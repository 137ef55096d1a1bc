import type { StatusRecord } from '../store/types.ts';
import type { SalesRegistration } from '../types.ts';
import type { PendingEvent, RecordStateChanged } from './types.ts';

/** What an event needs of the record it is about (none of its personal fields). */
export type EventSubject = Pick<StatusRecord, 'id' | 'kind' | 'owner' | 'acceptedAt' | 'record'> &
  Partial<Pick<StatusRecord, 'frameKey' | 'dealer'>>;

/** What a record changes to. */
export interface StateChange {
  state: RecordStateChanged['state'];
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
 * A change of state as the record's outbox keeps it, until {@link eventOf} makes the event of it.
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

/**
 * The event of a change kept in a record's outbox. Only the fields named in {@link RecordStateChanged} are copied
 * from the record: never anything of its personal data.
 *
 * @example
 * const events = (record.pendingEvents ?? []).map((pending) => eventOf(record, pending));
 */
export const eventOf = (record: EventSubject, pending: PendingEvent): RecordStateChanged => {
  const event: RecordStateChanged = {
    eventId: `${record.id}:${pending.at}`,
    recordId: record.id,
    kind: record.kind,
    client: record.owner,
    state: pending.state,
    previousState: pending.previousState,
    attempts: pending.attempts,
    sequence: pending.sequence ?? 0,
    at: pending.at,
    acceptedAt: record.acceptedAt,
  };
  if (pending.downstreamId) event.downstreamId = pending.downstreamId;
  if (pending.error) event.error = pending.error;
  if (record.kind === 'salesRegistration') {
    // Read without `record` (the operators' redrive on AWS), the same values stand at the top: frameKey, dealer.
    const sale = (record.record ?? {}) as Partial<SalesRegistration>;
    const frameNum = sale.FrameNum ?? record.frameKey?.slice(record.frameKey.indexOf('#') + 1);
    const dealerId = sale.DealerId ?? record.dealer;
    if (typeof frameNum === 'string') event.FrameNum = frameNum;
    if (typeof dealerId === 'number') event.DealerId = dealerId;
  }
  return event;
};

/**
 * The event of a record's change of state, built from the record as it was and what it changes to.
 *
 * @example
 * const event = stateChangeOf(claimed, { state: 'rejected', attempts: 1, at, error: 'Frame number already registered' });
 */
export const stateChangeOf = (
  before: EventSubject &
    Pick<StatusRecord, 'status'> &
    Partial<Pick<StatusRecord, 'eventSequence' | 'history'>>,
  change: Omit<StateChange, 'sequence'> & Partial<Pick<StateChange, 'sequence'>>,
): RecordStateChanged =>
  eventOf(
    before,
    pendingChangeOf(before, { ...change, sequence: change.sequence ?? nextSequenceOf(before) }),
  );
