import { MetricUnit } from '@aws-lambda-powertools/metrics';
// Test mode's isolation (lib/delivery/isolation.ts), the part without the downstream callers.
import { mayProbe, type OpenPartition, openPartitions } from '../delivery/openIsolation.ts';
import { metrics, reportDownstreamHeld } from '../observability/metrics.ts';
import { DOWNSTREAM_OF_KIND, DOWNSTREAMS } from '../outage/constants.ts';
import { heldVisibilitySeconds } from '../outage/heldVisibility.ts';
import { readHolds } from '../outage/holdStore.ts';
import type { Downstream, HoldRecord } from '../outage/types.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import type { StatusRecord } from '../records/types.ts';
import {
  outageSettings,
  queueUrlFor,
  type ReconcileSettings,
  reconcileSettings,
} from '../settings/settings.ts';
import { openRecordIds, postponeDue, undoPostpone } from '../store/openRecords.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import { RECORD_KINDS, type RecordKind } from '../types.ts';
import { requeueDelaySeconds } from './requeueDelay.ts';

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
   * its own alarm). A held kind's probe record does not count, nor a test record (it never moves an alarm).
   */
  oldestWaitSeconds: number;
  /** The kinds that had more due records than the run's limit: the next run goes on with them. */
  deferred: RecordKind[];
  /** Each downstream's hold as this run read it: `downstreamHeld` is published from it every run. */
  holds: RunHolds;
  /** Per kind, whether its downstream was held and this run queued its one probe record. */
  probes: Record<RecordKind, number>;
}

/**
 * Live records a held kind's run reads at most to find its one probe record: the first of the `open` index,
 * whatever their `dueAt` (a handful, not the backlog).
 */
const PROBE_READS = 10;

/** What the run does with one kind, by its downstream's hold. */
type KindPass =
  /** Held: skip; `probe` when no probe has gone out since its time came (all copies may be hidden for hours). */
  | { mode: 'held'; probe: boolean }
  /**
   * Not held; `closedAt` when a hold closed so recently that a `dueAt` set during it may still be pending, and
   * `windowEnd`, the latest such `dueAt` (the records read up to it).
   */
  | { mode: 'open'; closedAt?: string; windowEnd?: string };

/**
 * How long after a hold closed a `dueAt` set during it may still be pending: the reconciler's spacing (up to the
 * longest re-queue interval) or a failed probe's (its message hidden half as long as the hold had lasted, up to
 * 12 hours: lib/outage/heldVisibility.ts), either plus RECONCILE_AFTER_SECONDS. After a hold of a day the second
 * is the longer: a record put off by its probe at the end of the hold is due six hours after the close.
 */
const pendingAfterClose = (
  hold: RunHolds[Downstream] & { closedAt: string },
  settings: ReconcileSettings,
  probeSeconds: number,
): number => {
  const closedAt = new Date(hold.closedAt);
  const heldSince = hold.heldSince ?? hold.closedAt;
  const longestHidden = heldVisibilitySeconds({ heldSince, until: hold.closedAt }, closedAt, probeSeconds);
  return Math.max(settings.maxIntervalSeconds, longestHidden) + settings.reconcileAfterSeconds;
};

const passOf = (
  hold: RunHolds[Downstream],
  now: Date,
  settings: ReconcileSettings,
  probeSeconds: number,
): KindPass => {
  if (hold.held) return { mode: 'held', probe: !hold.probeAt || Date.parse(hold.probeAt) <= now.getTime() };
  if (!hold.closedAt) return { mode: 'open' };
  const closedAt = hold.closedAt;
  const windowEnd = dueAfter(
    new Date(closedAt),
    pendingAfterClose({ ...hold, closedAt }, settings, probeSeconds),
  );
  return now.getTime() < Date.parse(windowEnd) ? { mode: 'open', closedAt, windowEnd } : { mode: 'open' };
};

/** The last time anyone moved the record (accepted it, tried it, queued it again). */
const lastMovedAt = (status: StatusRecord): string =>
  // ISO times in UTC sort as text: the last is the latest.
  [status.acceptedAt, status.updatedAt, status.requeuedAt ?? ''].sort().at(-1) ?? '';

/**
 * A held kind's candidates for its probe record, in the order to try them: the first PROBE_READS live `accepted`
 * records of the `open` index whatever their `dueAt`, but those a worker holds a lease on, the one nobody moved
 * for longest first. Whatever their `dueAt`: a failed probe puts its record off by half the hold's age, so after a
 * while every record may be due hours ahead, and a probe is still due every OUTAGE_PROBE_SECONDS. The index sorts
 * by `dueAt` only; a record tried or queued again is put later in it, so the one nobody moved for longest is
 * nearly always among its first records, and ordering those by their last move takes the records in turn: the one
 * just queued as the probe (its `requeuedAt` now) comes last, though its new `dueAt` may be the earliest.
 *
 * Live records only (lib/delivery/isolation.ts mayProbe): the kind's live partition holds no test record written
 * since test records had their own; one written before is read past, page by page, and takes no place of a live
 * record however many there are (they settle within their tries, so this costs reads only while they last).
 */
const probeCandidates = async (openKind: string, now: Date): Promise<StatusRecord[]> => {
  const nowIso = now.toISOString();
  const live: StatusRecord[] = [];
  for await (const ids of openRecordIds(openKind, { pageSize: PROBE_READS })) {
    const statuses = await getStatusRecords(ids, { consistent: true });
    for (const id of ids) {
      const status = statuses.get(id);
      if (status && mayProbe(status) && live.length < PROBE_READS) live.push(status);
    }
    if (live.length >= PROBE_READS) break;
  }
  const candidates = live
    .filter((status) => status.status === 'accepted' && status.dueAt !== undefined)
    .filter((status) => status.leaseUntil === undefined || status.leaseUntil <= nowIso);
  // A stable sort: of records moved at the same time, the one due first.
  return candidates.sort((a, b) => lastMovedAt(a).localeCompare(lastMovedAt(b)));
};

/**
 * Queues a held kind's one probe record: the first candidate it can move on (postponeDue, as any re-queue: of two
 * reconcilers only one queues it, and never while a worker holds it), its next `dueAt` spaced as a re-queue's and
 * its `requeuedAt` now (so the next probe takes another record). Not queued, it is put back as it was.
 *
 * @returns 'queued', 'unqueued' (SQS refused it), or 'none' (no record to take).
 */
const queueProbe = async (
  kind: RecordKind,
  openKind: string,
  now: Date,
  settings: ReconcileSettings,
): Promise<'queued' | 'unqueued' | 'none'> => {
  for (const status of await probeCandidates(openKind, now)) {
    const seen = status.dueAt ?? '';
    const nextDue = dueAfter(now, requeueDelaySeconds(status.requeues ?? 0, settings));
    // Moved or leased since it was read: the next candidate.
    if (!(await postponeDue(status.id, seen, nextDue, now, { at: now }))) continue;
    const failed = await sendRecords(queueUrlFor(kind), [queuedRecordOf(status)]);
    if (failed.length === 0) return 'queued';
    // Due again as it was (see the open pass); the next run's probe may take it.
    await undoPostpone(status.id, nextDue, { ...status, dueAt: seen }).catch(() => false);
    return 'unqueued';
  }
  return 'none';
};

/** What one run needs to queue a partition's due records. */
interface RunContext {
  now: Date;
  settings: ReconcileSettings;
  everyOpenRecord: boolean;
  limitAfterHold?: number;
  result: ReconcileResult;
}

/**
 * Queues again the due records of one `open` partition of a kind (see reconcileOpenRecords), at most `limit` of
 * them, the oldest due first; adds them to the run's result.
 *
 * @returns how many it queued, and whether it stopped at `limit` with more to read.
 */
const queueDue = async (
  kind: RecordKind,
  { openKind, mode }: OpenPartition,
  pass: Extract<KindPass, { mode: 'open' }>,
  limit: number,
  run: RunContext,
): Promise<{ queued: number; deferred: boolean }> => {
  const { now, settings, everyOpenRecord, result } = run;
  const nowIso = now.toISOString();
  const { closedAt, windowEnd } = pass;
  // In the while after a close the backlog is drained faster than a backlog of the usual kind.
  const kindLimit = closedAt && !everyOpenRecord ? (run.limitAfterHold ?? settings.maxAfterHold) : limit;
  // After a recent close, records due later are read too, up to the latest dueAt set during the hold.
  const dueBefore = windowEnd ?? nowIso;
  // A record moved on to a later dueAt may come round again in a later page: once is enough.
  const seen = new Set<string>();
  // Records this run took for this partition (queued or not): the run's bound.
  let taken = 0;
  let queued = 0;
  const query = openRecordIds(
    openKind,
    everyOpenRecord ? {} : { dueBefore, pageSize: Math.max(1, Math.min(100, kindLimit)) },
  );
  for await (const page of query) {
    if (taken >= kindLimit || queued >= kindLimit) return { queued, deferred: true };
    const ids = page.filter((id) => !seen.has(id)).slice(0, kindLimit - taken);
    for (const id of ids) seen.add(id);
    const statuses = await getStatusRecords(ids, { consistent: true });
    const candidates: { status: StatusRecord; heldThrough: boolean }[] = [];
    for (const status of statuses.values()) {
      if (status.status !== 'accepted' || status.dueAt === undefined) continue;
      // Waited through the hold that closed: nobody has moved it since.
      const heldThrough = closedAt !== undefined && lastMovedAt(status) < closedAt;
      if (!everyOpenRecord) {
        if (status.dueAt > nowIso && !heldThrough) continue;
        if (status.leaseUntil !== undefined && status.leaseUntil > nowIso) continue;
      }
      candidates.push({ status, heldThrough });
    }
    // At start (everyOpenRecord) a lease left by the stopped runner's worker is void: its worker is gone.
    const leaseCheckAt = everyOpenRecord ? new Date('9999-12-31T23:59:59.999Z') : now;
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
    // A page's moves at once (at most a page, 100): a drain after a hold moves thousands a run.
    const moved = await Promise.all(candidates.slice(0, kindLimit - queued).map(moveOn));
    const due = moved.filter((status) => status !== undefined);
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
          undoPostpone(status.id, nextDue, { ...status, dueAt: status.dueAt ?? nextDue }).catch(() => false),
        ),
    );
    for (const { status } of due) {
      if (failed.has(status.id)) continue;
      queued++;
      result.requeued[kind]++;
      // The stuck-records alarm is set on this wait: a test record's never moves it.
      if (mode === 'test') continue;
      const since = Math.max(Date.parse(status.acceptedAt), closedAt ? Date.parse(closedAt) : 0);
      const waited = Math.max(0, Math.round((now.getTime() - since) / 1000));
      result.oldestWaitSeconds = Math.max(result.oldestWaitSeconds, waited);
    }
    result.unqueued += failed.size;
  }
  return { queued, deferred: false };
};

/**
 * The reconciler: finds `accepted` records that nobody has queued or worked on by their `dueAt` (a crash between
 * the status write and the send, SQS down at intake, a redriven record whose message has expired) through the
 * sparse `open` index, and queues them again. Each is first moved on to its next `dueAt` with a conditional
 * write, so two reconcilers never queue it twice; the wait to that next `dueAt` doubles with each re-queue nobody
 * has tried since (RECONCILE_AFTER_SECONDS up to RECONCILE_MAX_INTERVAL_SECONDS), so a record waiting in a long
 * backlog is not queued again every few minutes. A copy that meets a message still on the queue is harmless (the
 * worker claims records, and only a claim counts a try). At most `limit` records per kind a run (the oldest due
 * first, live records before test records); the rest wait for the next run. The same code runs as a scheduled
 * function on AWS and in `npm start`.
 *
 * Each kind's live and test records are read apart (lib/delivery/isolation.ts openPartitions). Downstream holds
 * (docs/behaviour.md#outages-and-holds), read once per run, concern live records only: while a kind's downstream
 * is held its live records are not queued again (the worker would only hand them back), except one probe record
 * each run its hold's next probe is due (no worker has claimed it since `probeAt`): whatever its `dueAt`, the live
 * record no worker holds that nobody has moved for longest, of the first few of the index (see probeCandidates),
 * so the records are probed in turn and a probe message exists even when every copy is hidden for hours (or
 * expired after 14 days) and every record's `dueAt` is hours ahead. A test record is never the probe and never
 * waits for a hold: its simulator answers whatever SAP does. Once the hold closes, the held records are due and the
 * normal pass queues them, the oldest first, `limit` a run; for a while after the close (the longest re-queue
 * interval, or half the hold's length if longer: a failed probe's wait; plus RECONCILE_AFTER_SECONDS) it also
 * queues records whose later `dueAt` was set before the close, and restarts the spacing of every record nobody
 * moved since the close (a wait through an outage is not a backlog), its next `dueAt` past that while, so each run
 * reads on into the backlog instead of the records it just queued.
 *
 * @example
 * const { requeued } = await reconcileOpenRecords(); // { salesRegistration: 1, caseRecord: 0 }
 */
export const reconcileOpenRecords = async (options: ReconcileOptions = {}): Promise<ReconcileResult> => {
  const now = options.now ?? new Date();
  const settings = reconcileSettings();
  const everyOpenRecord = options.everyOpenRecord ?? false;
  const limit = everyOpenRecord ? Number.POSITIVE_INFINITY : (options.limit ?? settings.maxPerRun);
  const holds: RunHolds = await readHolds();
  // The workers' probe period: how long they hide a held message at least (see pendingAfterClose).
  const { probeSeconds } = outageSettings();
  const result: ReconcileResult = {
    requeued: { salesRegistration: 0, caseRecord: 0 },
    unqueued: 0,
    oldestWaitSeconds: 0,
    deferred: [],
    holds,
    probes: { salesRegistration: 0, caseRecord: 0 },
  };
  const run: RunContext = { now, settings, everyOpenRecord, limitAfterHold: options.limitAfterHold, result };
  /** The pass of one partition: at start (everyOpenRecord) the queue is empty, and every record needs a message. */
  const passFor = (kind: RecordKind, partition: OpenPartition): KindPass =>
    everyOpenRecord || !partition.held
      ? { mode: 'open' }
      : passOf(holds[DOWNSTREAM_OF_KIND[kind]], now, settings, probeSeconds);
  for (const kind of options.kinds ?? RECORD_KINDS) {
    // The kind's limit, live records first: test records never take a place a live record needs.
    let queuedForKind = 0;
    let deferred = false;
    for (const partition of openPartitions(kind)) {
      const pass = passFor(kind, partition);
      if (pass.mode === 'held') {
        // A held kind queues one live record, and only when its probe is due (its records' dueAt do not matter).
        const probe = pass.probe ? await queueProbe(kind, partition.openKind, now, settings) : 'none';
        if (probe === 'queued') {
          result.probes[kind] = 1;
          result.requeued[kind]++;
        }
        if (probe === 'unqueued') result.unqueued++;
        continue;
      }
      const left = Math.max(0, limit - queuedForKind);
      const done = await queueDue(kind, partition, pass, left, run);
      queuedForKind += done.queued;
      deferred ||= done.deferred;
    }
    if (deferred) result.deferred.push(kind);
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
