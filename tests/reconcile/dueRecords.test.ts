/**
 * Which records the reconciler queues again, at the edges: due at this very moment, a lease ending at this very
 * moment, both kinds or the ones asked for, more records than one page of the `open` index, a record that a
 * worker settles or retries between the reconciler's index read and its record read, and SQS refusing the sends.
 * Every test starts from a table and queues of its own, with the clock given (`now`).
 */
import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { QueuedRecord, RecordKind } from '../../lib/types.ts';
import { caseInput, salesRegistrationInput } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sqsProxy: Awaited<ReturnType<typeof startFaultyProxy>>;
/** The service's DynamoDB calls pass this proxy: it records them, and runs a test's race at a chosen call. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

/** Points the service at the proxies (isolatedAws points it at the emulators). */
const throughProxies = () => {
  process.env.AWS_ENDPOINT_URL_SQS = sqsProxy.endpoint;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
};

beforeAll(async () => {
  aws = await isolatedAws();
  // The service's SQS calls pass a proxy that can refuse them; the tests read the queues directly.
  sqsProxy = await startFaultyProxy(aws.sqsEndpoint, 'SendMessageBatch');
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
  throughProxies();
});

afterAll(async () => {
  await Promise.all([sqsProxy.stop(), dynamo.stop()]);
});

beforeEach(async () => {
  // A table and queues of its own for every test: counts are this test's records only.
  aws = await freshAws();
  throughProxies();
  sqsProxy.heal();
  dynamo.reset();
});

/** A record as a request left it at 08:00, due at 08:05; `changes` make it something else. */
const stored = (changes: Partial<StatusRecord> = {}): StatusRecord => {
  const kind = changes.kind ?? 'caseRecord';
  return {
    id: randomBytes(16).toString('hex'),
    kind,
    status: 'accepted',
    attempts: 0,
    acceptedAt: '2026-11-22T08:00:00.000Z',
    updatedAt: '2026-11-22T08:00:00.000Z',
    requestId: 'r',
    owner: kind === 'caseRecord' ? 'example-web-forms' : 'example-dealer',
    record: (kind === 'caseRecord'
      ? caseInput()
      : salesRegistrationInput()) as unknown as StatusRecord['record'],
    openKind: kind,
    dueAt: '2026-11-22T08:05:00.000Z',
    ...changes,
  };
};
const at = (iso: string) => new Date(iso);
const queueOf = (kind: RecordKind) =>
  kind === 'caseRecord'
    ? aws.resources.queues.CaseQueue.url
    : aws.resources.queues.SalesRegistrationQueue.url;
/** The ids of the messages on a kind's queue (left there: every test has queues of its own). */
const queuedIds = async (kind: RecordKind = 'caseRecord') => {
  const ids: string[] = [];
  for (;;) {
    const out = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueOf(kind),
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 300,
      }),
    );
    if (!out.Messages?.length) return ids.sort();
    for (const message of out.Messages) ids.push((JSON.parse(message.Body ?? '{}') as QueuedRecord).id);
  }
};

describe('the moment a record is due', () => {
  it('queues a record due at this very moment, and one whose lease ends at this very moment', async () => {
    // Prepare
    const dueNow = stored({ dueAt: '2026-11-22T08:06:00.000Z' });
    const leaseEndsNow = stored({ leaseUntil: '2026-11-22T08:06:00.000Z' });
    const leasedOneMoreMs = stored({ leaseUntil: '2026-11-22T08:06:00.001Z' });
    const dueOneMsLater = stored({ dueAt: '2026-11-22T08:06:00.001Z' });
    await seedStatusRecords([dueNow, leaseEndsNow, leasedOneMoreMs, dueOneMsLater]);
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(result).toMatchObject({
      requeued: { salesRegistration: 0, caseRecord: 2 },
      unqueued: 0,
      oldestWaitSeconds: 360,
      deferred: [],
    });
    expect(await queuedIds()).toEqual([dueNow.id, leaseEndsNow.id].sort());
  });

  it('reads only the index while nothing is due: no record is read', async () => {
    // Prepare: accepted records, none of them due yet.
    await seedStatusRecords([stored({ dueAt: '2026-11-22T09:00:00.000Z' }), stored()]);
    dynamo.reset();
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:04:59Z'), kinds: ['caseRecord'] });
    // Assess
    expect(result.requeued.caseRecord).toBe(0);
    // The holds' one read (BatchGetItem of the two hold items), then the index: the live records, then the test
    // records (a partition of their own).
    expect(dynamo.calls).toEqual(['BatchGetItem', 'Query', 'Query']);
  });

  it('reads the records it found in the index consistently (the index may be older than the record)', async () => {
    await seedStatusRecords([stored()]);
    dynamo.reset();
    await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    // The holds' read, then the records'.
    const reads = dynamo.requests.filter((call) => call.operation === 'BatchGetItem');
    expect(reads).toHaveLength(2);
    for (const read of reads) {
      const requestItems = read.body.RequestItems as Record<string, { ConsistentRead?: boolean }>;
      expect(Object.values(requestItems).map((table) => table.ConsistentRead)).toEqual([true]);
    }
  });
});

describe('kinds', () => {
  it('looks at both kinds by default, each queued on its own queue', async () => {
    // Prepare
    const sale = stored({ kind: 'salesRegistration', acceptedAt: '2026-11-22T07:00:00.000Z' });
    const caseRecord = stored();
    await seedStatusRecords([sale, caseRecord]);
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z') });
    // Assess
    expect(result).toMatchObject({
      requeued: { salesRegistration: 1, caseRecord: 1 },
      unqueued: 0,
      oldestWaitSeconds: 3960,
      deferred: [],
    });
    expect(await queuedIds('salesRegistration')).toEqual([sale.id]);
    expect(await queuedIds('caseRecord')).toEqual([caseRecord.id]);
  });

  it('looks only at the kinds asked for', async () => {
    const sale = stored({ kind: 'salesRegistration' });
    const caseRecord = stored();
    await seedStatusRecords([sale, caseRecord]);
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    expect(result.requeued).toEqual({ salesRegistration: 0, caseRecord: 1 });
    expect(await queuedIds('salesRegistration')).toEqual([]);
    expect(await getStatusRecord(sale.id)).toMatchObject({ dueAt: sale.dueAt });
  });
});

describe('more records than one page of the index', () => {
  it('queues every accepted record once at the local runner start, though moving them on puts them in later pages', async () => {
    // Prepare: 101 records: the index is read 100 at a time, and every record moved on (to 08:11) sorts after
    // the ones still to come.
    const records = Array.from({ length: 101 }, (_, i) =>
      stored({ dueAt: `2026-11-22T08:05:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z` }),
    );
    await seedStatusRecords(records);
    // Act
    const result = await reconcileOpenRecords({
      now: at('2026-11-22T08:06:00Z'),
      everyOpenRecord: true,
      kinds: ['caseRecord'],
    });
    const queued = await queuedIds();
    // Assess
    expect(result.requeued.caseRecord).toBe(101);
    expect(queued).toEqual(records.map((r) => r.id).sort());
    expect(await getStatusRecord(records[0].id)).toMatchObject({ dueAt: '2026-11-22T08:11:00.000Z' });
  });
});

describe('a record that a worker changes between the index read and the record read', () => {
  const now = at('2026-11-22T08:06:00Z');

  it('leaves a record the worker has just delivered', async () => {
    // Prepare: due; a worker delivers it once the reconciler has found it in the index.
    const record = stored();
    await seedStatusRecords([record]);
    dynamo.before(
      'BatchGetItem',
      async () => {
        const leaseUntil = '2026-11-22T08:07:30.000Z';
        const claim = await claimRecord(record.id, { now, leaseUntil });
        if (!claim.claimed) throw new Error('not claimed');
        const recorded = await recordAttempt(
          claim.claimed,
          { status: 'delivered', attempts: 1, downstreamId: '49000001', at: now },
          leaseUntil,
        );
        expect(recorded).toMatchObject({ status: 'delivered' });
      },
      // The run's first BatchGetItem reads the holds; the hook runs before the records are read.
      1,
    );
    // Act
    const result = await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(result).toMatchObject({
      requeued: { salesRegistration: 0, caseRecord: 0 },
      unqueued: 0,
      oldestWaitSeconds: 0,
      deferred: [],
    });
    expect(await queuedIds()).toEqual([]);
    expect(await getStatusRecord(record.id)).toMatchObject({ status: 'delivered', downstreamId: '49000001' });
  });

  it('leaves a record whose retry the worker has just scheduled (due again later, no lease)', async () => {
    // Prepare: due; a worker's attempt fails transiently and moves the record on to its retry.
    const record = stored();
    await seedStatusRecords([record]);
    dynamo.before(
      'BatchGetItem',
      async () => {
        const leaseUntil = '2026-11-22T08:07:30.000Z';
        const claim = await claimRecord(record.id, { now, leaseUntil });
        if (!claim.claimed) throw new Error('not claimed');
        await recordAttempt(
          claim.claimed,
          { status: 'accepted', attempts: 1, error: 'HTTP 503', at: now, dueAt: '2026-11-22T08:11:30.000Z' },
          leaseUntil,
        );
      },
      1,
    );
    // Act
    const result = await reconcileOpenRecords({ now, kinds: ['caseRecord'] });
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(result.requeued.caseRecord).toBe(0);
    expect(await queuedIds()).toEqual([]);
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'accepted',
      dueAt: '2026-11-22T08:11:30.000Z',
      error: 'HTTP 503',
    });
  });
});

describe('SQS refusing the sends', () => {
  it('counts the records it could not queue as unqueued, leaves them due as they were, and queues them on the next run', async () => {
    // Prepare
    const records = [stored(), stored({ requeues: 2, requeuedAt: '2026-11-22T07:45:00.000Z' })];
    await seedStatusRecords(records);
    sqsProxy.failAfter(0);
    // Act
    const refused = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    const queuedWhileDown = await queuedIds();
    const afterRefusal = await Promise.all(records.map((r) => getStatusRecord(r.id)));
    sqsProxy.heal();
    const next = await reconcileOpenRecords({ now: at('2026-11-22T08:07:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(refused).toMatchObject({
      requeued: { salesRegistration: 0, caseRecord: 0 },
      unqueued: 2,
      oldestWaitSeconds: 0,
      deferred: [],
    });
    expect(queuedWhileDown).toEqual([]);
    // Not put off by a spacing with no message anywhere: due, its re-queues and their date as before.
    expect(afterRefusal[0]).toMatchObject({ dueAt: '2026-11-22T08:05:00.000Z' });
    expect(afterRefusal[0]?.requeues).toBeUndefined();
    expect(afterRefusal[0]?.requeuedAt).toBeUndefined();
    expect(afterRefusal[1]).toMatchObject({
      dueAt: '2026-11-22T08:05:00.000Z',
      requeues: 2,
      requeuedAt: '2026-11-22T07:45:00.000Z',
    });
    expect(next).toMatchObject({
      requeued: { salesRegistration: 0, caseRecord: 2 },
      unqueued: 0,
      oldestWaitSeconds: 420,
      deferred: [],
    });
    expect(await queuedIds()).toEqual(records.map((r) => r.id).sort());
  });

  it('queues on the next run a record held through an outage whose re-queue after the close SQS refused', async () => {
    // Prepare: a case due since 08:05; the CRM held from 08:10:04 to 08:40. A re-queue after the close puts the
    // record past the while read after it (about an hour): refused, it must not wait that hour with no message.
    const record = stored();
    await seedStatusRecords([record]);
    const holds = createDownstreamHolds({
      afterFailures: 5,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 0,
    });
    for (const [index, recordId] of ['a', 'b', 'a', 'b', 'a'].entries())
      await holds.noteOutcome(
        'crm',
        { recordId, kind: 'transient' },
        new Date(Date.parse('2026-11-22T08:10:00Z') + index * 1000),
      );
    expect(await holds.mayDeliver('crm', at('2026-11-22T08:40:00Z'))).toEqual({ deliver: true, probe: true });
    await holds.noteOutcome(
      'crm',
      { recordId: 'p', kind: 'delivered', probe: true },
      at('2026-11-22T08:40:00Z'),
    );
    sqsProxy.failAfter(0);
    // Act
    const refused = await reconcileOpenRecords({ now: at('2026-11-22T08:41:00Z'), kinds: ['caseRecord'] });
    sqsProxy.heal();
    const next = await reconcileOpenRecords({ now: at('2026-11-22T08:42:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(refused.holds.crm).toMatchObject({ held: false, closedAt: '2026-11-22T08:40:00.000Z' });
    expect(refused).toMatchObject({ requeued: { caseRecord: 0 }, unqueued: 1 });
    expect(next).toMatchObject({ requeued: { caseRecord: 1 }, unqueued: 0 });
    expect(await queuedIds()).toEqual([record.id]);
  });
});

describe('what the reconciler leaves alone, without a write', () => {
  it('tries no write for a record the index still lists but that is settled, one leased, and one not yet due', async () => {
    // Prepare: the index still lists a delivered record (a stale entry), a record leased past now, one due later.
    const settled = stored({ status: 'delivered' });
    const leased = stored({ leaseUntil: '2026-11-22T08:07:00.000Z' });
    const later = stored({ dueAt: '2026-11-22T08:06:00.001Z' });
    await seedStatusRecords([settled, leased, later]);
    dynamo.reset();
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    // Assess: none queued, and none moved on (the conditional write would refuse them, but is not even tried).
    expect(result.requeued.caseRecord).toBe(0);
    expect(dynamo.calls).not.toContain('UpdateItem');
    expect(await queuedIds()).toEqual([]);
  });
});

describe('downstream holds at their edges', () => {
  const holdsFor = () =>
    createDownstreamHolds({
      afterFailures: 5,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 0,
    });
  /** Opens the CRM's hold from `from` (five transient failures a second apart): its first probe is due 34 s later. */
  const openCrmHold = async (holds: ReturnType<typeof holdsFor>, from: string) => {
    for (const [index, recordId] of ['a', 'b', 'a', 'b', 'a'].entries())
      await holds.noteOutcome(
        'crm',
        { recordId, kind: 'transient' },
        new Date(Date.parse(from) + index * 1000),
      );
  };

  it('queues the probe record at the very moment the probe is due, and only one, the kind not deferred', async () => {
    // Prepare: fifteen cases due, the CRM held from 08:10:04, its first probe due at 08:10:34.
    const records = Array.from({ length: 15 }, () => stored());
    await seedStatusRecords(records);
    const holds = holdsFor();
    await openCrmHold(holds, '2026-11-22T08:10:00.000Z');
    dynamo.reset();
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:10:34Z'), kinds: ['caseRecord'] });
    // Assess
    expect(result.holds.crm.held).toBe(true);
    expect(result.probes.caseRecord).toBe(1);
    expect(await queuedIds()).toHaveLength(1);
    expect(result.deferred).toEqual([]);
    // To find its one probe a held kind reads a few records (10), not a page of the backlog.
    const recordReads = dynamo.requests
      .filter((call) => call.operation === 'BatchGetItem')
      .slice(1)
      .flatMap((call) => Object.values(call.body.RequestItems as Record<string, { Keys: unknown[] }>))
      .flatMap((table) => table.Keys);
    expect(recordReads.length).toBeLessThanOrEqual(10);
  });

  it('takes the next record as the probe when the first cannot be moved on (another reconciler moved it)', async () => {
    // Prepare: two cases due, the CRM held, its probe due; the first move on is refused as a racing run's would be.
    const records = [stored(), stored()];
    await seedStatusRecords(records);
    const holds = holdsFor();
    await openCrmHold(holds, '2026-11-22T08:10:00.000Z');
    dynamo.before('UpdateItem', () => ({
      status: 400,
      type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
    }));
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:11:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(result.probes.caseRecord).toBe(1);
    expect(await queuedIds()).toHaveLength(1);
  });

  it('drains at the usual pace once the while after a close is over (the close long past), at its very end', async () => {
    // Prepare: three cases due since 08:05; the CRM held from 06:00 to 07:00. The while after the close is the
    // longest re-queue interval plus the reconcile delay (3,600 + 300 s): over at 08:05:00.
    await seedStatusRecords([stored(), stored(), stored()]);
    const holds = holdsFor();
    await openCrmHold(holds, '2026-11-22T06:00:00.000Z');
    expect(await holds.mayDeliver('crm', at('2026-11-22T07:00:00Z'))).toEqual({ deliver: true, probe: true });
    await holds.noteOutcome(
      'crm',
      { recordId: 'p', kind: 'delivered', probe: true },
      at('2026-11-22T07:00:00Z'),
    );
    // Act
    const result = await reconcileOpenRecords({
      now: at('2026-11-22T08:05:00Z'),
      kinds: ['caseRecord'],
      limit: 1,
      limitAfterHold: 3,
    });
    // Assess: the usual limit, not the one after a hold.
    expect(result.holds.crm).toMatchObject({ held: false, closedAt: '2026-11-22T07:00:00.000Z' });
    expect(result.requeued.caseRecord).toBe(1);
    expect(result.deferred).toEqual(['caseRecord']);
  });

  it('spaces a record tried after the close as usual (five minutes, not past the while after the close), dated', async () => {
    // Prepare: the CRM held from 08:10:04 to 08:40; a case a worker tried at 08:41:30, due again at 08:42.
    const record = stored({ updatedAt: '2026-11-22T08:41:30.000Z', dueAt: '2026-11-22T08:42:00.000Z' });
    await seedStatusRecords([record]);
    const holds = holdsFor();
    await openCrmHold(holds, '2026-11-22T08:10:00.000Z');
    expect(await holds.mayDeliver('crm', at('2026-11-22T08:40:00Z'))).toEqual({ deliver: true, probe: true });
    await holds.noteOutcome(
      'crm',
      { recordId: 'p', kind: 'delivered', probe: true },
      at('2026-11-22T08:40:00Z'),
    );
    // Act
    const result = await reconcileOpenRecords({ now: at('2026-11-22T08:43:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(result.requeued.caseRecord).toBe(1);
    expect(await getStatusRecord(record.id)).toMatchObject({
      dueAt: '2026-11-22T08:48:00.000Z',
      requeues: 1,
      requeuedAt: '2026-11-22T08:43:00.000Z',
    });
  });
});
