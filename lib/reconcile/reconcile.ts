import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { metrics, reportDownstreamHeld } from '../observability/metrics.ts';
import { DOWNSTREAM_OF_KIND, DOWNSTREAMS } from '../outage/constants.ts';
import { readHolds } from '../outage/holdStore.ts';
import type { Downstream, HoldRecord } from '../outage/types.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import type { StatusRecord } from '../records/types.ts';
import { queueUrlFor, reconcileSettings } from '../settings/settings.ts';
import { openRecordIds, postponeDue, undoPostpone } from '../store/openRecords.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import type { RecordKind } from '../types.ts';
import { requeueDelaySeconds } from './requeueDelay.ts';

const KINDS: readonly RecordKind[] = ['salesRegistration', 'caseRecord'];

/** The hold of each downstream as the run read it (lib/outage: the hold items, one BatchGetItem). */
export type RunHolds = Record<Downstream, Pick<HoldRecord, 'held' | 'heldSince' | 'probeAt' | 'closedAt'>>;

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
  /** The same, for a kind in the while after its downstream's hold closed (default RECONCILE_MAX_AFTER_HOLD). */
  limitAfterHold?: number;
}

export interface ReconcileResult {
  /** Records queued again, per kind (a held kind's probe record included). */
  requeued: Record<RecordKind, number>;
  /** Records that were due but could not be queued (SQS refused them); the next run tries again. */
  unqueued: number;
  /**
   * How long the longest-waiting record queued again had waited, in seconds (0 when none): since it was accepted,
   * or since its downstream's last hold closed if that is later (a wait through an outage is the hold's, which has
   * its own alarm). A held kind's probe record does not count.
   */
  oldestWaitSeconds: number;
  /** The kinds that had more due records than the run's limit: the next run goes on with them. */
  deferred: RecordKind[];
  /** Each downstream's hold as this run read it: `downstreamHeld` is published from it every run. */
  holds: RunHolds;
  /** Per kind, whether its downstream was held and this run queued its one probe record. */
  probes: Record<RecordKind, number>;
}

/** Records a held kind's run reads at most to find its one probe record. */
const PROBE_READS = 10;

/** What the run does with one kind, by its downstream's hold. */
type KindPass =
  /** Held: skip; `probe` when no probe has gone out since its time came (all copies may be hidden for hours). */
  | { mode: 'held'; probe: boolean }
  /** Not held; `closedAt` when a hold closed so recently that re-queue spacing set before it may still be pending. */
  | { mode: 'open'; closedAt?: string };

const passOf = (hold: RunHolds[Downstream], now: Date, horizonSeconds: number): KindPass => {
  if (hold.held) return { mode: 'held', probe: !hold.probeAt || Date.parse(hold.probeAt) <= now.getTime() };
  if (hold.closedAt && now.getTime() < Date.parse(hold.closedAt) + horizonSeconds * 1000)
    return { mode: 'open', closedAt: hold.closedAt };
  return { mode: 'open' };
};

/** The last time anyone moved the record (accepted it, tried it, queued it again). */
const lastMovedAt = (status: StatusRecord): string =>
  // ISO times in UTC sort as text: the last is the latest.
  [status.acceptedAt, status.updatedAt, status.requeuedAt ?? ''].sort().at(-1) ?? '';

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
 * Downstream holds (CONTRACT section 3, "Outages"), read once per run: while a kind's downstream is held its
 * records are not queued again (the worker would only hand them back), except one due record when the hold's
 * next probe is due and no worker has claimed it, so a probe message exists even when every copy is hidden for
 * hours (or expired after 14 days). Once the hold closes, the held records are due and the normal pass queues
 * them, the oldest first, `limit` a run; for a while after the close (the longest re-queue interval plus
 * RECONCILE_AFTER_SECONDS) it also queues records whose later `dueAt` was set before the close, and restarts the
 * spacing of every record nobody moved since the close (a wait through an outage is not a backlog), its next
 * `dueAt` past that while, so each run reads on into the backlog instead of the records it just queued.
 *
 * @example
 * const { requeued } = await reconcileOpenRecords(); // { salesRegistration: 1, caseRecord: 0 }
 */
export const reconcileOpenRecords = async (options: ReconcileOptions = {}): Promise<ReconcileResult> => {
  const now = options.now ?? new Date();
  const nowIso = now.toISOString();
  const settings = reconcileSettings();
  const limit = options.everyOpenRecord ? Number.POSITIVE_INFINITY : (options.limit ?? settings.maxPerRun);
  const holds: RunHolds = await readHolds();
  // Spacing set before a close is pending at most this long after it (a worker's own dueAt is shorter).
  const horizonSeconds = settings.maxIntervalSeconds + settings.reconcileAfterSeconds;
  const result: ReconcileResult = {
    requeued: { salesRegistration: 0, caseRecord: 0 },
    unqueued: 0,
    oldestWaitSeconds: 0,
    deferred: [],
    holds,
    probes: { salesRegistration: 0, caseRecord: 0 },
  };
  for (const kind of options.kinds ?? KINDS) {
    // At start (everyOpenRecord) the queue is empty: every record needs a message, held or not.
    const pass: KindPass = options.everyOpenRecord
      ? { mode: 'open' }
      : passOf(holds[DOWNSTREAM_OF_KIND[kind]], now, horizonSeconds);
    if (pass.mode === 'held' && !pass.probe) continue;
    // A held kind queues one record; it may read a few more (leased or not yet due) to find it.
    const closedAt = pass.mode === 'open' ? pass.closedAt : undefined;
    // In the while after a close the backlog is drained faster than a backlog of the usual kind.
    const openLimit =
      closedAt && !options.everyOpenRecord ? (options.limitAfterHold ?? settings.maxAfterHold) : limit;
    const kindLimit = pass.mode === 'held' ? 1 : openLimit;
    const readLimit = pass.mode === 'held' ? PROBE_READS : openLimit;
    // After a recent close, records due later are read too, up to the latest dueAt set before the close.
    const windowEnd = closedAt ? dueAfter(new Date(closedAt), horizonSeconds) : undefined;
    const dueBefore = windowEnd ?? nowIso;
    // A record moved on to a later dueAt may come round again in a later page: once is enough.
    const seen = new Set<string>();
    // Records this run took for this kind (queued or not): the run's bound.
    let taken = 0;
    let queued = 0;
    const query = openRecordIds(
      kind,
      options.everyOpenRecord ? {} : { dueBefore, pageSize: Math.min(100, readLimit) },
    );
    for await (const page of query) {
      if (taken >= readLimit || queued >= kindLimit) {
        if (pass.mode === 'open') result.deferred.push(kind);
        break;
      }
      const ids = page.filter((id) => !seen.has(id)).slice(0, readLimit - taken);
      for (const id of ids) seen.add(id);
      const statuses = await getStatusRecords(ids, { consistent: true });
      const candidates: { status: StatusRecord; heldThrough: boolean }[] = [];
      for (const status of statuses.values()) {
        if (status.status !== 'accepted' || status.dueAt === undefined) continue;
        // Waited through the hold that closed: nobody has moved it since.
        const heldThrough = closedAt !== undefined && lastMovedAt(status) < closedAt;
        if (!options.everyOpenRecord) {
          if (status.dueAt > nowIso && !heldThrough) continue;
          if (status.leaseUntil !== undefined && status.leaseUntil > nowIso) continue;
        }
        candidates.push({ status, heldThrough });
      }
      // At start (everyOpenRecord) a lease left by the stopped runner's worker is void: its worker is gone.
      const leaseCheckAt = options.everyOpenRecord ? new Date('9999-12-31T23:59:59.999Z') : now;
      const moveOn = async ({ status, heldThrough }: (typeof candidates)[number]) => {
        const spaced = dueAfter(now, requeueDelaySeconds(heldThrough ? 0 : (status.requeues ?? 0), settings));
        // A record queued for the backlog goes past the window read after the close, so the next runs read the
        // rest of the backlog rather than it (its message is on the queue; this is only the safety net).
        const nextDue = heldThrough && windowEnd && spaced < windowEnd ? windowEnd : spaced;
        const at = { at: now, restartSpacing: heldThrough };
        return (await postponeDue(status.id, status.dueAt ?? '', nextDue, leaseCheckAt, at))
          ? { status, nextDue }
          : undefined;
      };
      const due: { status: StatusRecord; nextDue: string }[] = [];
      if (pass.mode === 'held') {
        // One probe record: the first that is ours to move.
        for (const candidate of candidates) {
          const moved = await moveOn(candidate);
          if (moved) due.push(moved);
          if (moved) break;
        }
      } else {
        // A page's moves at once (at most a page, 100): a drain after a hold moves thousands a run.
        const moved = await Promise.all(candidates.slice(0, kindLimit - queued).map(moveOn));
        due.push(...moved.filter((status) => status !== undefined));
      }
      taken += ids.length;
      if (due.length === 0) continue;
      const failed = new Set(
        await sendRecords(
          queueUrlFor(kind),
          due.map(({ status }) => queuedRecordOf(status)),
        ),
      );
      // A record moved on but not queued is due again as it was: otherwise it would wait out its spacing (an
      // hour after a hold closed) with no message anywhere. If the undo fails too, it waits that spacing.
      await Promise.all(
        due
          .filter(({ status }) => failed.has(status.id))
          .map(({ status, nextDue }) =>
            undoPostpone(status.id, nextDue, { ...status, dueAt: status.dueAt ?? nextDue }).catch(
              () => false,
            ),
          ),
      );
      for (const { status } of due) {
        if (failed.has(status.id)) continue;
        queued++;
        result.requeued[kind]++;
        if (pass.mode === 'held') {
          result.probes[kind]++;
          continue;
        }
        const since = Math.max(Date.parse(status.acceptedAt), closedAt ? Date.parse(closedAt) : 0);
        const waited = Math.max(0, Math.round((now.getTime() - since) / 1000));
        result.oldestWaitSeconds = Math.max(result.oldestWaitSeconds, waited);
      }
      result.unqueued += failed.size;
    }
  }
  return result;
};

/**
 * Publishes a run's figures: `requeued` per downstream, `oldestRequeuedWait` (seconds), on which the stuck-record
 * alarm is set, and `downstreamHeld` per downstream, on which the held alarms are set.
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
  // Every run, as it stands: the held alarm clears even when a hold opened and closed within one minute.
  for (const downstream of DOWNSTREAMS) reportDownstreamHeld(downstream, result.holds[downstream].held);
};
