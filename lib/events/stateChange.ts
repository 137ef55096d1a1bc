import { nextSequenceOf, pendingChangeOf, type StateChange } from '../records/stateChange.ts';
import type { PendingEvent, StatusRecord } from '../records/types.ts';
import type { SalesRegistration } from '../types.ts';
import type { RecordStateChanged } from './types.ts';

/** What an event needs of the record it is about (none of its personal fields). */
export type EventSubject = Pick<StatusRecord, 'id' | 'kind' | 'owner' | 'acceptedAt' | 'record'> &
  Partial<Pick<StatusRecord, 'frameKey' | 'dealer' | 'test' | 'traceparent'>>;

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
  if (record.test) event.test = true;
  if (record.traceparent) event.traceparent = record.traceparent;
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
