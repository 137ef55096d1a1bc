/**
 * The reconciler's probe record through a long hold (docs/behaviour.md#outages-and-holds), against dynalite and fauxqs with the
 * clock given. A failed probe puts its record's `dueAt` off by half the hold's age, so after a while every waiting
 * record is due hours ahead and every copy is hidden as long: the probe record is then taken whatever its `dueAt`,
 * the one tried least recently first, never one a worker holds, one per kind and run, only once the hold's probe
 * is due. After the close, records put off that far are queued again at once, not when their `dueAt` comes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDownstreamHolds, type DownstreamHolds } from '../../lib/outage/hold.ts';
import type { Downstream } from '../../lib/outage/types.ts';
import { type ReconcileResult, reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { dueAfter } from '../../lib/records/due.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';
import { afterFailedProbe, at, openHold as openHoldOf, PROBE_SECONDS, sale } from './support.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
/** The service's DynamoDB calls pass this proxy, which records them (how much a run reads). */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;
let holds: DownstreamHolds;

beforeAll(async () => {
  aws = await isolatedAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
});

afterAll(async () => {
  await dynamo.stop();
});

beforeEach(async () => {
  // Each test its own table (holds included) and queues.
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  dynamo.reset();
  holds = createDownstreamHolds({
    afterFailures: 5,
    probeSeconds: PROBE_SECONDS,
    failureRate: 0.5,
    rateWindow: 20,
    apiUsageShare: 0.8,
    cacheSeconds: 0,
  });
});

const queued = async (queue: 'CaseQueue' | 'SalesRegistrationQueue') =>
  (await aws.drain(aws.resources.queues[queue].url)).map((m) => m.id).sort();
const idsOf = (records: StatusRecord[]) => records.map((r) => r.id).sort();
const openHold = (downstream: Downstream, from: string) => openHoldOf(holds, downstream, from);

/** Runs the reconciler for the cases at `iso` and returns the run and the case probed (if any). */
const caseRun = async (iso: string): Promise<{ run: ReconcileResult; probed: string[] }> => {
  const run = await reconcileOpenRecords({ now: at(iso), kinds: ['caseRecord'] });
  return { run, probed: await queued('CaseQueue') };
};

describe('a hold two hours old, every waiting record put off by its failed probe', () => {
  it('queues a probe record in the first run once the probe is due, though every record is due an hour ahead', async () => {
    // Prepare: the CRM held since 06:00; three cases whose probes failed at 07:57, 07:58 and 07:59 (the last claimed
    // the probe period to 07:59:30), each due again after 09:00; their copies are hidden as long.
    const heldSince = await openHold('crm', '2026-11-22T06:00:00.000Z');
    const cases = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(heldSince, `2026-11-22T${hhmm}:00.000Z`),
    );
    await seedStatusRecords(cases);
    expect(await holds.claimProbe('crm', at('2026-11-22T07:59:00Z'))).toBe(true);
    // Act: the reconciler every minute from 08:00, as measured in the issue, until it queues a probe.
    const runs: { minute: number; probed: string[]; run: ReconcileResult }[] = [];
    for (let minute = 0; minute <= 64; minute++) {
      const { run, probed } = await caseRun(dueAfter(at('2026-11-22T08:00:00Z'), minute * 60));
      runs.push({ minute, probed, run });
      if (probed.length > 0) break;
    }
    // Assess
    expect(cases.every((record) => (record.dueAt ?? '') > '2026-11-22T09:00:00.000Z')).toBe(true);
    expect(runs.map(({ minute }) => minute)).toEqual([0]);
    expect(runs[0].run.holds.crm).toMatchObject({ held: true, heldSince });
    expect(runs[0].run.probes).toEqual({ salesRegistration: 0, caseRecord: 1 });
    // The one tried least recently (07:57).
    expect(runs[0].probed).toEqual([cases[0].id]);
    // A probe record is held, not stuck: its wait is not the stuck-records alarm's.
    expect(runs[0].run.oldestWaitSeconds).toBe(0);
  });

  it('takes the records in turn: never the one just probed while another waits, though its new dueAt is the earliest', async () => {
    // Prepare: as above; each run's probe period is then claimed by some other copy (the record's own message not
    // yet received), so the record just probed keeps the earliest dueAt (the reconciler's spacing, 5 minutes).
    const heldSince = await openHold('crm', '2026-11-22T06:00:00.000Z');
    const cases = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(heldSince, `2026-11-22T${hhmm}:00.000Z`),
    );
    await seedStatusRecords(cases);
    // Act: four probe periods, a run each once its probe is due.
    const probed: string[][] = [];
    for (const minute of ['00', '01', '02', '03']) {
      probed.push((await caseRun(`2026-11-22T08:${minute}:00.000Z`)).probed);
      expect(await holds.claimProbe('crm', at(`2026-11-22T08:${minute}:20.000Z`))).toBe(true);
    }
    // Assess
    expect(probed).toEqual([[cases[0].id], [cases[1].id], [cases[2].id], [cases[0].id]]);
  });

  it('does not take a record a worker holds a lease on, and takes it once the lease has run out', async () => {
    // Prepare: the case tried least recently is leased by a worker until 08:03.
    const heldSince = await openHold('crm', '2026-11-22T06:00:00.000Z');
    const leased = afterFailedProbe(heldSince, '2026-11-22T07:57:00.000Z', {
      leaseUntil: '2026-11-22T08:03:00.000Z',
    });
    const free = afterFailedProbe(heldSince, '2026-11-22T07:58:00.000Z');
    await seedStatusRecords([leased, free]);
    // Act
    const whileLeased = await caseRun('2026-11-22T08:00:00.000Z');
    expect(await holds.claimProbe('crm', at('2026-11-22T08:00:20.000Z'))).toBe(true);
    const afterLease = await caseRun('2026-11-22T08:04:00.000Z');
    // Assess
    expect(whileLeased.probed).toEqual([free.id]);
    // Negative control: the same record is the probe once its lease has run out.
    expect(afterLease.probed).toEqual([leased.id]);
  });

  it('queues one probe record per held kind and run, reading a handful of records, not the backlog', async () => {
    // Prepare: both downstreams held since 06:00; thirty cases and three sales registrations, all put off.
    const crmSince = await openHold('crm', '2026-11-22T06:00:00.000Z');
    const erpSince = await openHold('erp', '2026-11-22T06:00:00.000Z');
    const cases = Array.from({ length: 30 }, (_, i) =>
      afterFailedProbe(crmSince, dueAfter(at('2026-11-22T07:30:00Z'), i * 60)),
    );
    const sales = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(erpSince, `2026-11-22T${hhmm}:00.000Z`, sale({})),
    );
    await seedStatusRecords([...cases, ...sales]);
    dynamo.reset();
    // Act
    const run = await reconcileOpenRecords({ now: at('2026-11-22T08:00:00Z') });
    const caseMessages = await queued('CaseQueue');
    const saleMessages = await queued('SalesRegistrationQueue');
    // Assess
    expect(run.probes).toEqual({ salesRegistration: 1, caseRecord: 1 });
    expect(run.requeued).toEqual({ salesRegistration: 1, caseRecord: 1 });
    expect(caseMessages).toEqual([cases[0].id]);
    expect(saleMessages).toEqual([sales[0].id]);
    // The live records' index read once per kind, ten ids at most; the records read at most ten per kind (sales
    // first); each kind's test records read apart (none due: one page, nothing read).
    const queries = dynamo.requests.filter((call) => call.operation === 'Query');
    expect(queries.map((call) => [call.body.ExpressionAttributeValues, call.body.Limit])).toEqual([
      [{ ':kind': { S: 'salesRegistration' } }, 10],
      [{ ':kind': { S: 'salesRegistration#test' }, ':due': { S: '2026-11-22T08:00:00.000Z' } }, 100],
      [{ ':kind': { S: 'caseRecord' } }, 10],
      [{ ':kind': { S: 'caseRecord#test' }, ':due': { S: '2026-11-22T08:00:00.000Z' } }, 100],
    ]);
    const recordReads = dynamo.requests
      .filter((call) => call.operation === 'BatchGetItem')
      .slice(1)
      .map((call) =>
        Object.values(call.body.RequestItems as Record<string, { Keys: unknown[] }>).reduce(
          (sum, table) => sum + table.Keys.length,
          0,
        ),
      );
    expect(recordReads).toEqual([3, 10]);
  });

  it('queues nothing while the next probe is not due, and the probe record at the very moment it is', async () => {
    // Prepare: a worker claimed the probe at 07:59:50, so the next may start at 08:00:20.
    const heldSince = await openHold('crm', '2026-11-22T06:00:00.000Z');
    const cases = ['07:57', '07:58'].map((hhmm) => afterFailedProbe(heldSince, `2026-11-22T${hhmm}:00.000Z`));
    await seedStatusRecords(cases);
    expect(await holds.claimProbe('crm', at('2026-11-22T07:59:50Z'))).toBe(true);
    // Act
    const notYet = await caseRun('2026-11-22T08:00:19.999Z');
    const due = await caseRun('2026-11-22T08:00:20.000Z');
    // Assess
    expect(notYet.run.requeued.caseRecord).toBe(0);
    expect(notYet.probed).toEqual([]);
    // Negative control: the same records, the probe due.
    expect(due.run.probes.caseRecord).toBe(1);
    expect(due.probed).toEqual([cases[0].id]);
  });
});

describe('after a twelve-hour hold closes', () => {
  it('queues at once the records whose failed probes put them off six hours, not when their dueAt comes', async () => {
    // Prepare: the CRM held from 20:00 the day before until 08:00; three cases whose probes failed just before the
    // close, due again about 14:00; a fourth never tried, due since 06:00.
    const heldSince = await openHold('crm', '2026-11-21T20:00:00.000Z');
    const putOff = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(heldSince, `2026-11-22T${hhmm}:00.000Z`),
    );
    const neverTried = acceptedCase({
      acceptedAt: '2026-11-21T19:00:00.000Z',
      dueAt: '2026-11-21T19:05:00.000Z',
    });
    await seedStatusRecords([...putOff, neverTried]);
    // A worker's probe succeeds at 08:00: the hold closes.
    expect(await holds.mayDeliver('crm', at('2026-11-22T08:00:00Z'))).toEqual({ deliver: true, probe: true });
    const close = { recordId: 'p', kind: 'delivered', probe: true } as const;
    expect(await holds.noteOutcome('crm', close, at('2026-11-22T08:00:00Z'))).toMatchObject({
      change: 'closed',
    });
    // Act: runs a minute apart, ten records a run at most in the while after a close.
    const runs = [];
    for (const minute of ['01', '02']) {
      runs.push(
        await reconcileOpenRecords({
          now: at(`2026-11-22T08:${minute}:00Z`),
          limitAfterHold: 10,
          kinds: ['caseRecord'],
        }),
      );
    }
    const messages = await queued('CaseQueue');
    // Assess
    expect(putOff.every((record) => (record.dueAt ?? '') > '2026-11-22T13:55:00.000Z')).toBe(true);
    expect(runs[0].holds.crm).toMatchObject({ held: false, closedAt: '2026-11-22T08:00:00.000Z' });
    expect(runs.map((run) => run.requeued.caseRecord)).toEqual([4, 0]);
    expect(messages).toEqual(idsOf([...putOff, neverTried]));
  });
});
