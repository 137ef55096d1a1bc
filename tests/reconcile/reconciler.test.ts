import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { reopenFailedRecord } from '../../lib/store/statusUpdates.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let dynamo: Awaited<ReturnType<typeof startFaultyProxy>>;
let caseQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
  // Every DynamoDB call passes a proxy that records its operation.
  dynamo = await startFaultyProxy(aws.dynamoEndpoint, 'none');
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  caseQueue = aws.resources.queues.CaseQueue.url;
});

afterAll(() => dynamo.stop());

beforeEach(async () => {
  await aws.drain(caseQueue);
});

const stored = acceptedCase;
const at = (iso: string) => new Date(iso);
const queuedIds = async () => (await aws.drain(caseQueue)).map((m) => m.id).sort();

describe('the reconciler', () => {
  it('queues a due record once, moves it on, and never scans the table', async () => {
    // Prepare: stored, never queued (the request died between its two writes).
    const record = stored();
    await seedStatusRecords([record]);
    const callsBefore = dynamo.calls.length;
    // Act
    const early = await reconcileOpenRecords({ now: at('2026-11-22T08:04:00Z'), kinds: ['caseRecord'] });
    const due = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    const queued = await queuedIds();
    const again = await reconcileOpenRecords({ now: at('2026-11-22T08:07:00Z'), kinds: ['caseRecord'] });
    const operations = new Set(dynamo.calls.slice(callsBefore));
    // Assess
    expect(early.requeued.caseRecord).toBe(0);
    expect(due).toMatchObject({ requeued: { caseRecord: 1 }, unqueued: 0, oldestWaitSeconds: 360 });
    expect(queued).toEqual([record.id]);
    expect(again.requeued.caseRecord).toBe(0);
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'accepted',
      dueAt: '2026-11-22T08:11:00.000Z',
    });
    expect(operations.has('Query')).toBe(true);
    expect(operations.has('Scan')).toBe(false);
  });

  it('queues each due record once when two reconcilers run at the same time', async () => {
    const records = Array.from({ length: 12 }, () => stored());
    await seedStatusRecords(records);
    const now = at('2026-11-22T08:06:00Z');
    const [a, b] = await Promise.all([
      reconcileOpenRecords({ now, kinds: ['caseRecord'] }),
      reconcileOpenRecords({ now, kinds: ['caseRecord'] }),
    ]);
    expect(a.requeued.caseRecord + b.requeued.caseRecord).toBe(12);
    expect(await queuedIds()).toEqual(records.map((r) => r.id).sort());
  });

  it('leaves alone records being delivered (an unexpired lease), settled ones, and ones not yet due', async () => {
    const leased = stored({ leaseUntil: '2026-11-22T08:07:00.000Z' });
    const leaseRanOut = stored({ leaseUntil: '2026-11-22T08:05:30.000Z' });
    const delivered = stored({ status: 'delivered', openKind: undefined, dueAt: undefined });
    const later = stored({ dueAt: '2026-11-22T09:00:00.000Z' });
    await seedStatusRecords([leased, leaseRanOut, delivered, later]);
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    expect(result.requeued.caseRecord).toBe(1);
    expect(await queuedIds()).toEqual([leaseRanOut.id]);
  });

  it('at the local runner start queues every accepted record, due or not, once', async () => {
    const records = [
      stored(),
      stored({ dueAt: '2030-01-01T00:00:00.000Z' }),
      stored({ leaseUntil: '2030-01-01T00:00:00.000Z' }),
    ];
    await seedStatusRecords(records);
    await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    await aws.drain(caseQueue);
    const result = await reconcileOpenRecords({ everyOpenRecord: true, kinds: ['caseRecord'] });
    const queued = await queuedIds();
    for (const r of records) expect(queued.filter((id) => id === r.id)).toHaveLength(1);
    expect(result.requeued.caseRecord).toBe(queued.length);
  });

  it('makes a redrive harmless whose dead letter has expired: the reopened record is queued once it is due', async () => {
    // Prepare: a failed record whose message is no longer in any queue.
    const failed = stored({
      status: 'failed',
      openKind: undefined,
      dueAt: undefined,
      attempts: 5,
      error: 'HTTP 503',
    });
    await seedStatusRecords([failed]);
    // Act
    const reopened = await reopenFailedRecord(failed, {
      at: at('2026-11-22T09:00:00Z'),
      dueAt: '2026-11-22T09:05:00.000Z',
    });
    const before = await reconcileOpenRecords({ now: at('2026-11-22T09:04:00Z'), kinds: ['caseRecord'] });
    const after = await reconcileOpenRecords({ now: at('2026-11-22T09:06:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(reopened).toMatchObject({ status: 'accepted' });
    expect(before.requeued.caseRecord).toBe(0);
    expect(after.requeued.caseRecord).toBe(1);
    expect(await queuedIds()).toEqual([failed.id]);
    expect(await getStatusRecord(failed.id)).toMatchObject({ status: 'accepted', attempts: 5 });
  });
});
