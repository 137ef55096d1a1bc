import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { queueUrlFor } from '../config.ts';
import { metrics } from '../observability/metrics.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { openRecordIds, postponeDue } from '../store/openRecords.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import type { StatusRecord } from '../store/types.ts';
import type { RecordKind } from '../types.ts';
import { dueAfter, reconcileSettings } from './settings.ts';

const KINDS: readonly RecordKind[] = ['salesRegistration', 'caseRecord'];

export interface ReconcileOptions {
  now?: Date;
  /**
   * Queue every `accepted` record, due or not, leased or not (the local runner at start: its in-memory queue is
   * gone). Default: only those due, whose worker lease (if any) has run out.
   */
  everyOpenRecord?: boolean;
  kinds?: readonly RecordKind[];
}

export interface ReconcileResult {
  /** Records queued again, per kind. */
  requeued: Record<RecordKind, number>;
  /** Records that were due but could not be queued (SQS refused them); the next run tries again. */
  unqueued: number;
  /** How long the longest-waiting record queued again had been accepted, in seconds (0 when none). */
  oldestWaitSeconds: number;
}

/**
 * The reconciler: finds `accepted` records that nobody has queued or worked on by their `dueAt` (a crash between
 * the status write and the send, SQS down at intake, a redriven record whose message has expired) through the
 * sparse `open` index, and queues them again. Each is first moved on to its next `dueAt` with a conditional
 * write, so two reconcilers never queue it twice and a record is queued again at most once per
 * RECONCILE_AFTER_SECONDS; a copy that meets a message still on the queue is harmless (the worker claims
 * records). The same code runs as a scheduled function on AWS and in `npm start`.
 *
 * @example
 * const { requeued } = await reconcileOpenRecords(); // { salesRegistration: 1, caseRecord: 0 }
 */
export const reconcileOpenRecords = async (options: ReconcileOptions = {}): Promise<ReconcileResult> => {
  const now = options.now ?? new Date();
  const nowIso = now.toISOString();
  const { reconcileAfterSeconds } = reconcileSettings();
  const result: ReconcileResult = {
    requeued: { salesRegistration: 0, caseRecord: 0 },
    unqueued: 0,
    oldestWaitSeconds: 0,
  };
  for (const kind of options.kinds ?? KINDS) {
    // A record moved on to a later dueAt may come round again in a later page: once is enough.
    const seen = new Set<string>();
    const query = openRecordIds(kind, options.everyOpenRecord ? {} : { dueBefore: nowIso });
    for await (const page of query) {
      const ids = page.filter((id) => !seen.has(id));
      for (const id of ids) seen.add(id);
      const statuses = await getStatusRecords(ids, { consistent: true });
      const due: StatusRecord[] = [];
      for (const status of statuses.values()) {
        if (status.status !== 'accepted' || status.dueAt === undefined) continue;
        if (!options.everyOpenRecord) {
          if (status.dueAt > nowIso) continue;
          if (status.leaseUntil !== undefined && status.leaseUntil > nowIso) continue;
        }
        // At start (everyOpenRecord) a lease left by the stopped runner's worker is void: its worker is gone.
        const leaseCheckAt = options.everyOpenRecord ? new Date('9999-12-31T23:59:59.999Z') : now;
        if (await postponeDue(status.id, status.dueAt, dueAfter(now, reconcileAfterSeconds), leaseCheckAt))
          due.push(status);
      }
      if (due.length === 0) continue;
      const failed = new Set(await sendRecords(queueUrlFor(kind), due.map(queuedRecordOf)));
      for (const status of due) {
        if (failed.has(status.id)) continue;
        result.requeued[kind]++;
        const waited = Math.round((now.getTime() - Date.parse(status.acceptedAt)) / 1000);
        result.oldestWaitSeconds = Math.max(result.oldestWaitSeconds, waited);
      }
      result.unqueued += failed.size;
    }
  }
  return result;
};

/**
 * Publishes a run's figures: `requeued` per downstream and `oldestRequeuedWait` (seconds), on which the stuck-record
 * alarm is set.
 *
 * @example
 * publishReconcileMetrics(await reconcileOpenRecords());
 */
export const publishReconcileMetrics = (result: ReconcileResult): void => {
  for (const [kind, downstream] of [
    ['salesRegistration', 'erp'],
    ['caseRecord', 'crm'],
  ] as const) {
    const single = metrics.singleMetric();
    single.addDimension('downstream', downstream);
    single.addMetric('requeued', MetricUnit.Count, result.requeued[kind]);
  }
  const single = metrics.singleMetric();
  single.addMetric('oldestRequeuedWait', MetricUnit.Seconds, result.oldestWaitSeconds);
};
