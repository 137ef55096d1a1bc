import type { StatusRecord } from '../records/types.ts';
import { type QueuedRecord, RECORD_KINDS, type RecordKind } from '../types.ts';

/**
 * The message that queues a stored record: its id, kind, request id and owner (the client, which sendRecords also
 * gives SQS as the message's tenant) and its trace context, never its content (the worker reads that from the store). Every producer
 * (intake, the reconciler, redrive) writes its messages with this.
 *
 * @example
 * queuedRecordOf(status) // { id: '3f0c…', kind: 'caseRecord', requestId: 'c0ffee…', owner: 'example-dealer' }
 */
export const queuedRecordOf = (
  status: Pick<StatusRecord, 'id' | 'kind' | 'requestId' | 'owner' | 'test' | 'traceparent'>,
): QueuedRecord => ({
  id: status.id,
  kind: status.kind,
  requestId: status.requestId,
  owner: status.owner,
  ...(status.test ? { test: true as const } : {}),
  ...(status.traceparent ? { traceparent: status.traceparent } : {}),
});

/**
 * Reads a message body as the record it names, or undefined for anything else. An older message that also carries
 * the record's content (`record`) is read too; the content is dropped here, so nothing downstream can use it.
 *
 * @example
 * readQueuedRecord('{"id":"3f0c…","kind":"caseRecord","requestId":"r1"}') // { id: '3f0c…', kind: 'caseRecord', requestId: 'r1' }
 * // a message with "owner" keeps it: the dead-letter copy still names its client
 */
export const readQueuedRecord = (body: string): QueuedRecord | undefined => {
  let message: Partial<Record<keyof QueuedRecord, unknown>>;
  try {
    message = JSON.parse(body) ?? {};
  } catch {
    return undefined;
  }
  const { id, kind, requestId, owner, test } = message;
  if (typeof id !== 'string' || id === '' || !RECORD_KINDS.includes(kind as RecordKind)) return undefined;
  return {
    id,
    kind: kind as RecordKind,
    requestId: typeof requestId === 'string' ? requestId : '',
    ...(typeof owner === 'string' && owner !== '' ? { owner } : {}),
    ...(test === true ? { test: true as const } : {}),
  };
};
