import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { queueUrlFor } from '../config.ts';
import { metrics } from '../observability/metrics.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { openRecordIds, postponeDue } from '../store/openRecords.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import type { StatusRecord } from '../store/types.ts';
import type { RecordKind } from '../types.ts';
import { dueAfter, reconcileSettings, requeueDelaySeconds } from './settings.ts';

const KINDS: readonly RecordKind[] = ['salesRegistration', 'caseRecord'];

export interface ReconcileOptions {
  now?: Date;
  /**
   * Queue every `accepted` record, due or not, leased or not (the local runner at start: its in-memory queue is
   * gone). Default: only those due, whose worker lease (if any) has run out.
   */
  everyOpenRecord?: boolean;
  kinds?: readonly RecordKind[];
  /**
   * Records queued again at most per kind in this run (default RECONCILE_MAX_PER_RUN); the rest stay due for the
   * next run. Not applied with everyOpenRecord (the local start must queue every record).
   */
  limit?: number;
}

export interface ReconcileResult {
  /** Records queued again, per kind. */
  requeued: Record<RecordKind, number>;
  /** Records that were due but could not be queued (SQS refused them); the next run tries again. */
  unqueued: number;
  /** How long the longest-waiting record queued again had been accepted, in seconds (0 when none). */
  oldestWaitSeconds: number;
  /** The kinds that had more due records than the run's limit: the next run goes on with them. */
  deferred: RecordKind[];
}

/**
 * The reconciler: finds `accepted` records that nobody has queued or worked on by their `dueAt` (a crash between
 * the status write and the send, SQS down at intake, a redriven record whose message has expired) through the
 * sparse `open` index, and queues them again. Each is first moved on to its next `dueAt` with a conditional
 * write, so two reconcilers never queue it twice; the wait to that next `dueAt` doubles with each re-queue nobody
 * has tried since (RECONCILE_AFTER_SECONDS up to RECONCILE_MAX_INTERVAL_SECONDS), so a record waiting in a long
 * backlog is not queued again every few minutes. A copy that meets a message still on the queue is harmless (the
 * worker claims records, and only a claim counts a try). At most `limit` records per kind a run (the oldest due
 * first); the rest wait for the next run. The same code runs as a scheduled function on AWS and in `npm start`.
 *
 * @example
 * const { requeued } = await reconcileOpenRecords(); // { salesRegistration: 1, caseRecord: 0 }
 */
export const reconcileOpenRecords = async (options: ReconcileOptions = {}): Promise<ReconcileResult> => {
  const now = options.now ?? new Date();
  const nowIso = now.toISOString();
  const settings = reconcileSettings();
  const limit = options.everyOpenRecord ? Number.POSITIVE_INFINITY : (options.limit ?? settings.maxPerRun);
  const result: ReconcileResult = {
    requeued: { salesRegistration: 0, caseRecord: 0 },
    unqueued: 0,
    oldestWaitSeconds: 0,
    deferred: [],
  };
  for (const kind of options.kinds ?? KINDS) {
    // A record moved on to a later dueAt may come round again in a later page: once is enough.
    const seen = new Set<string>();
    // Records this run took for this kind (queued or not): the run's bound.
    let taken = 0;
    const query = openRecordIds(
      kind,
      options.everyOpenRecord ? {} : { dueBefore: nowIso, pageSize: Math.min(100, limit) },
    );
    for await (const page of query) {
      if (taken >= limit) {
        result.deferred.push(kind);
        break;
      }
      const ids = page.filter((id) => !seen.has(id)).slice(0, limit - taken);
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
        const nextDue = dueAfter(now, requeueDelaySeconds(status.requeues ?? 0, settings));
        if (await postponeDue(status.id, status.dueAt, nextDue, leaseCheckAt)) due.push(status);
      }
      taken += ids.length;
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
