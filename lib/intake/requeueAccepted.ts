import { queueUrlFor } from '../config.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { scanStatusRecords } from '../store/scanStatus.ts';
import type { QueuedRecord, RecordKind } from '../types.ts';

/**
 * Queues again every record whose status is still `accepted`. The local runner does this at start: its queue
 * lives in memory, the status store on disk is the source of truth (CONTRACT section 4). A record that was
 * still queued gets a second message, which the worker drops once the first settled it.
 *
 * @returns how many records were queued, per kind.
 * @example
 * await requeueAcceptedRecords(); // { salesRegistration: 2, caseRecord: 0 }
 */
export const requeueAcceptedRecords = async (): Promise<Record<RecordKind, number>> => {
  const byKind: Record<RecordKind, QueuedRecord[]> = { salesRegistration: [], caseRecord: [] };
  for await (const status of scanStatusRecords('accepted')) {
    byKind[status.kind].push({
      id: status.id,
      kind: status.kind,
      requestId: status.requestId,
      record: status.record,
    });
  }
  for (const kind of Object.keys(byKind) as RecordKind[]) {
    if (byKind[kind].length === 0) continue;
    const failed = await sendRecords(queueUrlFor(kind), byKind[kind]);
    if (failed.length > 0) throw new Error(`${failed.length} accepted record(s) could not be queued again`);
  }
  return { salesRegistration: byKind.salesRegistration.length, caseRecord: byKind.caseRecord.length };
};
