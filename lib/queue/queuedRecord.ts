import type { StatusRecord } from '../store/types.ts';
import type { QueuedRecord, RecordKind } from '../types.ts';

const KINDS: readonly RecordKind[] = ['salesRegistration', 'caseRecord'];

/**
 * The message that queues a stored record: its id, kind and request id, never its content (the worker reads that
 * from the store). Every producer (intake, the reconciler, redrive) writes its messages with this.
 *
 * @example
 * queuedRecordOf(status) // { id: '3f0c…', kind: 'caseRecord', requestId: 'c0ffee…' }
 */
export const queuedRecordOf = (status: Pick<StatusRecord, 'id' | 'kind' | 'requestId'>): QueuedRecord => ({
  id: status.id,
  kind: status.kind,
  requestId: status.requestId,
});

/**
 * Reads a message body as the record it names, or undefined for anything else. An older message that also carries
 * the record's content (`record`) is read too; the content is dropped here, so nothing downstream can use it.
 *
 * @example
 * readQueuedRecord('{"id":"3f0c…","kind":"caseRecord","requestId":"r1"}') // { id: '3f0c…', kind: 'caseRecord', requestId: 'r1' }
 */
export const readQueuedRecord = (body: string): QueuedRecord | undefined => {
  let message: Partial<Record<keyof QueuedRecord, unknown>>;
  try {
    message = JSON.parse(body) ?? {};
  } catch {
    return undefined;
  }
  const { id, kind, requestId } = message;
  if (typeof id !== 'string' || id === '' || !KINDS.includes(kind as RecordKind)) return undefined;
  return { id, kind: kind as RecordKind, requestId: typeof requestId === 'string' ? requestId : '' };
};
