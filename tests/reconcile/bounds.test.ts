/**
 * The reconciler's bounds, with the clock moved, against dynalite and fauxqs: re-queues of one record spaced out
 * (a record waiting in a long queue backlog is not queued again every RECONCILE_AFTER_SECONDS), a limit per run,
 * and one run ordered so that publishing events and the purge go first and are never stopped by the re-queue.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { runReconciler } from '../../lib/reconcile/reconcilerRun.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;
let caseQueue: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  aws = await isolatedAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  caseQueue = aws.resources.queues.CaseQueue.url;
});

afterAll(() => dynamo.stop());

beforeEach(async () => {
  await aws.drain(caseQueue);
  dynamo.reset();
});

afterEach(() => {
  for (const key of ['RECONCILE_MAX_PER_RUN', 'RECONCILE_MAX_INTERVAL_SECONDS']) delete process.env[key];
  Object.assign(process.env, {
    CASE_QUEUE_URL: savedEnv.CASE_QUEUE_URL ?? process.env.CASE_QUEUE_URL,
  });
});

const minute = (base: string, minutes: number) => new Date(Date.parse(base) + minutes * 60_000);
const hhmm = (date: Date) => date.toISOString().slice(11, 16);

/** Runs the reconciler for the case kind every minute from `from` for `minutes`; the minutes it queued `id`. */
const everyMinute = async (id: string, from: string, minutes: number) => {
  const queuedAt: string[] = [];
  for (let m = 0; m <= minutes; m++) {
    const now = minute(from, m);
    await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    if ((await aws.drain(caseQueue)).some((message) => message.id === id)) queuedAt.push(hhmm(now));
  }
  return queuedAt;
};

describe('re-queues of one record nobody tries (a queue backlog)', () => {
  it('come 5, 10, 20, 40 minutes apart, then at most hourly', async () => {
    // Prepare: accepted 08:00, due 08:05; its messages wait in a backlog, so no worker ever claims it.
    const record = acceptedCase();
    await seedStatusRecords([record]);
    // Act: the scheduled reconciler, every minute for four hours.
    const queuedAt = await everyMinute(record.id, '2026-11-22T08:00:00Z', 240);
    // Assess
    expect(queuedAt).toEqual(['08:05', '08:10', '08:20', '08:40', '09:20', '10:20', '11:20']);
    expect(await getStatusRecord(record.id)).toMatchObject({ status: 'accepted', requeues: 7 });
  }, 120_000);

  it('start from RECONCILE_AFTER_SECONDS again once a worker has tried the record', async () => {
    // Prepare: queued again three times (08:05, 08:10, 08:20), then a worker tries it at 08:25 and fails
    // transiently, due again at 08:31 (its retry and the reconcile delay).
    const record = acceptedCase();
    await seedStatusRecords([record]);
    await everyMinute(record.id, '2026-11-22T08:00:00Z', 24);
    const tryAt = minute('2026-11-22T08:00:00Z', 25);
    const lease = minute('2026-11-22T08:00:00Z', 26).toISOString();
    const claim = await claimRecord(record.id, { now: tryAt, leaseUntil: lease });
    if (!claim.claimed) throw new Error('not claimed');
    await recordAttempt(
      claim.claimed,
      { status: 'accepted', attempts: 1, at: tryAt, error: 'HTTP 503', dueAt: '2026-11-22T08:31:00.000Z' },
      lease,
    );
    // Act
    const queuedAt = await everyMinute(record.id, '2026-11-22T08:26:00Z', 20);
    // Assess: 08:31, then 5 and 10 minutes later (not 40 after its last re-queue).
    expect(queuedAt).toEqual(['08:31', '08:36', '08:46']);
  }, 60_000);
});

describe('a limit per run', () => {
  it('queues at most RECONCILE_MAX_PER_RUN records per kind, the oldest due first; the next run goes on', async () => {
    // Prepare: 12 due records, due a minute apart (earlier than any other record of this file).
    const records = Array.from({ length: 12 }, (_, i) =>
      acceptedCase({ dueAt: minute('2020-01-01T07:00:00Z', i).toISOString() }),
    );
    await seedStatusRecords(records);
    process.env.RECONCILE_MAX_PER_RUN = '5';
    const now = new Date('2020-01-01T08:00:00Z');
    // Act
    const first = await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    const firstIds = (await aws.drain(caseQueue)).map((m) => m.id);
    const second = await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    await aws.drain(caseQueue);
    const third = await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    const thirdIds = (await aws.drain(caseQueue)).map((m) => m.id);
    // Assess
    expect(first).toMatchObject({ requeued: { caseRecord: 5 }, deferred: ['caseRecord'] });
    expect(firstIds.sort()).toEqual(
      records
        .slice(0, 5)
        .map((r) => r.id)
        .sort(),
    );
    expect(second).toMatchObject({ requeued: { caseRecord: 5 }, deferred: ['caseRecord'] });
    expect(third).toMatchObject({ requeued: { caseRecord: 2 }, deferred: [] });
    expect(thirdIds.sort()).toEqual(
      records
        .slice(10)
        .map((r) => r.id)
        .sort(),
    );
  });
});

describe('one run of the reconciler', () => {
  /** The indexes the run's queries read, in order (each step reads its own). */
  const indexesRead = () => [
    ...new Set(dynamo.requests.filter((r) => r.operation === 'Query').map((r) => String(r.body.IndexName))),
  ];

  it('publishes events and purges before it queues again, each within its own bound', async () => {
    // Prepare: a backlog of due records larger than the run's limit, and a settled record whose personal data is due
    // for removal.
    const backlog = Array.from({ length: 8 }, () => acceptedCase());
    const settled = acceptedCase({
      status: 'delivered',
      openKind: undefined,
      dueAt: undefined,
      purgeKind: 'caseRecord',
      purgeAt: '2026-11-01T00:00:00.000Z',
    });
    await seedStatusRecords([...backlog, settled]);
    process.env.RECONCILE_MAX_PER_RUN = '3';
    // Act
    const run = await runReconciler();
    // Assess
    expect(indexesRead()).toEqual(['events', 'purge', 'open']);
    expect(run.purge).toMatchObject({ purged: { caseRecord: 1 } });
    expect(run.reconciled).toMatchObject({ requeued: { caseRecord: 3 }, deferred: ['caseRecord'] });
    expect(await getStatusRecord(settled.id)).toHaveProperty('personalDataRemovedAt');
  });

  it('reports a re-queue that fails, with the events and the purge done', async () => {
    // Prepare: due records whose queue is not configured (the re-queue throws), and a purge due.
    await seedStatusRecords([acceptedCase()]);
    const settled = acceptedCase({
      status: 'rejected',
      openKind: undefined,
      dueAt: undefined,
      purgeKind: 'caseRecord',
      purgeAt: '2026-11-01T00:00:00.000Z',
    });
    await seedStatusRecords([settled]);
    delete process.env.CASE_QUEUE_URL;
    // Act
    const run = await runReconciler();
    // Assess
    expect(run.reconciled).toMatchObject({
      error: expect.objectContaining({ message: expect.stringContaining('CASE_QUEUE_URL') }),
    });
    expect(run.events).toMatchObject({ unpublished: 0 });
    expect(run.purge).toMatchObject({ purged: { caseRecord: 1 } });
  });
});
