import type { StatusRecord } from '../store/types.ts';
import type { SalesRegistration } from '../types.ts';
import type { RecordStateChanged } from './types.ts';

/**
 * The event of a record's change of state, built from the record as it was and what it changes to. Only the
 * fields named in {@link RecordStateChanged} are copied: never anything of the record's personal data.
 *
 * @example
 * const event = stateChangeOf(claimed, { state: 'rejected', attempts: 1, at, error: 'Frame number already registered' });
 */
export const stateChangeOf = (
  before: Pick<StatusRecord, 'id' | 'kind' | 'owner' | 'status' | 'acceptedAt' | 'record'>,
  change: {
    state: RecordStateChanged['state'];
    attempts: number;
    at: Date;
    downstreamId?: string;
    error?: string;
  },
): RecordStateChanged => {
  const at = change.at.toISOString();
  const event: RecordStateChanged = {
    eventId: `${before.id}:${at}`,
    recordId: before.id,
    kind: before.kind,
    client: before.owner,
    state: change.state,
    previousState: before.status,
    attempts: change.attempts,
    at,
    acceptedAt: before.acceptedAt,
  };
  if (change.downstreamId) event.downstreamId = change.downstreamId;
  if (change.error) event.error = change.error;
  if (before.kind === 'salesRegistration') {
    const sale = before.record as Partial<SalesRegistration>;
    if (typeof sale.FrameNum === 'string') event.FrameNum = sale.FrameNum;
    if (typeof sale.DealerId === 'number') event.DealerId = sale.DealerId;
  }
  return event;
};
