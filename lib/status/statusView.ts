import { traceIdOf } from '../observability/traceContext.ts';
import type { StatusRecord } from '../records/types.ts';

/**
 * What a status look-up shows of a status record: never the record's personal data. `heldSince` (since when its
 * downstream has been held: lib/status/heldSince.ts) only while the record is `accepted`.
 *
 * @example
 * statusView(status, '2026-11-27T03:00:00.000Z') // { id, status: 'accepted', attempts: 0, ..., heldSince: '2026-11-27T03:00:00.000Z' }
 */
export const statusView = (
  status: Pick<
    StatusRecord,
    'id' | 'status' | 'attempts' | 'acceptedAt' | 'updatedAt' | 'downstreamId' | 'error'
  > &
    Partial<Pick<StatusRecord, 'test' | 'traceparent'>>,
  heldSince?: string,
) => ({
  id: status.id,
  status: status.status,
  attempts: status.attempts,
  acceptedAt: status.acceptedAt,
  updatedAt: status.updatedAt,
  // A test record never waits for a hold: the simulators answer it whatever SAP and Salesforce do.
  ...(heldSince && status.status === 'accepted' && !status.test ? { heldSince } : {}),
  ...(status.downstreamId ? { downstreamId: status.downstreamId } : {}),
  ...(status.error ? { error: status.error } : {}),
  ...(status.test ? { test: true as const } : {}),
  // The record's trace (contract section 8): an engineer opens it from here.
  ...traceIdField(status.traceparent),
});

/** `{ traceId }` of a record's `traceparent`; nothing for a record accepted before tracing. */
const traceIdField = (traceparent: string | undefined): { traceId?: string } => {
  const traceId = traceIdOf(traceparent);
  return traceId ? { traceId } : {};
};
