/**
 * The reconciler and the downstream holds (docs/behaviour.md#outages-and-holds), against dynalite and fauxqs with the
 * clock given: a held kind is not queued again but for one probe record when the hold's probe is due; once the
 * hold closes the whole backlog is queued again in the next runs (the per-run limit, not the re-queue spacing,
 * sets the pace); a record whose message expired during the outage is queued again; the holds are read every run.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createDownstreamHolds, type DownstreamHolds } from '../../lib/outage/hold.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let holds: DownstreamHolds;

beforeEach(async () => {
  // Each test its own table (holds included) and queues.
  aws = await isolatedAws();
  holds = createDownstreamHolds({
    afterFailures: 5,
    probeSeconds: 30,
    failureRate: 0.5,
    rateWindow: 20,
    apiUsageShare: 0.8,
    cacheSeconds: 0,
  });
});

const at = (iso: string) => new Date(iso);
const queued = async (queue: 'CaseQueue' | 'SalesRegistrationQueue') =>
  (await aws.drain(aws.resources.queues[queue].url)).map((m) => m.id).sort();
const idsOf = (records: StatusRecord[]) => records.map((r) => r.id).sort();
const acceptedSale = (changes: Partial<StatusRecord> = {}) =>
  acceptedCase({
    kind: 'salesRegistration',
    statusKey: 'salesRegistration#accepted',
    openKind: 'salesRegistration',
    ...changes,
  });

/** Opens the CRM's hold as workers do: five transient failures of two records, a second apart from `from`. */
const openCrmHold = async (from: string) => {
  const start = Date.parse(from);
  for (const [index, recordId] of ['a', 'b', 'a', 'b', 'a'].entries())
    await holds.noteOutcome('crm', { recordId, kind: 'transient' }, new Date(start + index * 1000));
};

/** Closes it as a worker's successful probe does. */
const closeCrmHold = async (iso: string) => {
  const permit = await holds.mayDeliver('crm', at(iso));
  expect(permit).toEqual({ deliver: true, probe: true });
  const transition = await holds.noteOutcome(
    'crm',
    { recordId: 'p', kind: 'delivered', probe: true },
    at(iso),
  );
  expect(transition).toMatchObject({ change: 'closed', closedAt: iso });
};

describe('while a downstream is held', () => {
  it('queues none of its records again but one when its probe is due and unclaimed; the other kind as usual', async () => {
    // Prepare: five cases and two sales registrations accepted at 08:00, all due at 08:05; the CRM held from 08:10:04
    // (its first probe may start at 08:10:34).
    const cases = Array.from({ length: 5 }, () => acceptedCase());
    const sales = [acceptedSale(), acceptedSale()];
    await seedStatusRecords([...cases, ...sales]);
    await openCrmHold('2026-11-22T08:10:00.000Z');
    // Act
    const beforeProbe = await reconcileOpenRecords({ now: at('2026-11-22T08:10:20Z') });
    const casesBeforeProbe = await queued('CaseQueue');
    const salesQueued = await queued('SalesRegistrationQueue');
    const probeDue = await reconcileOpenRecords({ now: at('2026-11-22T08:11:00Z') });
    const probeMessages = await queued('CaseQueue');
    // A worker's copy takes the probe: until the next probe is due, nothing.
    expect(await holds.claimProbe('crm', at('2026-11-22T08:11:30Z'))).toBe(true);
    const probeClaimed = await reconcileOpenRecords({ now: at('2026-11-22T08:11:40Z') });
    const afterClaim = await queued('CaseQueue');
    // Assess
    expect(beforeProbe.holds.crm).toMatchObject({ held: true, heldSince: '2026-11-22T08:10:04.000Z' });
    expect(beforeProbe.holds.erp.held).toBe(false);
    expect(beforeProbe.requeued).toEqual({ salesRegistration: 2, caseRecord: 0 });
    expect(casesBeforeProbe).toEqual([]);
    expect(salesQueued).toEqual(idsOf(sales));
    expect(probeDue.requeued.caseRecord).toBe(1);
    expect(probeDue.probes).toEqual({ salesRegistration: 0, caseRecord: 1 });
    // A probe record is held, not stuck: its wait is not the stuck-records alarm's.
    expect(probeDue.oldestWaitSeconds).toBe(0);
    expect(probeMessages).toHaveLength(1);
    expect(idsOf(cases)).toContain(probeMessages[0]);
    expect(probeClaimed.requeued.caseRecord).toBe(0);
    expect(afterClaim).toEqual([]);
  });
});

describe('after a hold closes', () => {
  it('queues the whole backlog in the next runs, the limit after a hold a run, though earlier re-queues had spaced it by an hour', async () => {
    // Prepare: the CRM held from 08:10:04 to 08:40. Four cases due since 08:05; three queued again at 08:20 whose
    // spacing (their fifth re-queue) put them off to 09:20; one a worker tried after the close (due 08:47).
    const due = Array.from({ length: 4 }, () => acceptedCase());
    const spaced = Array.from({ length: 3 }, () =>
      acceptedCase({
        requeues: 5,
        requeuedAt: '2026-11-22T08:20:00.000Z',
        dueAt: '2026-11-22T09:20:00.000Z',
      }),
    );
    const triedAfter = acceptedCase({
      updatedAt: '2026-11-22T08:41:30.000Z',
      dueAt: '2026-11-22T08:47:00.000Z',
    });
    await seedStatusRecords([...due, ...spaced, triedAfter]);
    await openCrmHold('2026-11-22T08:10:00.000Z');
    await closeCrmHold('2026-11-22T08:40:00.000Z');
    // Act: three runs a minute apart, three records a run at most in the while after a close (one otherwise).
    const runs = [];
    const messages: string[] = [];
    for (const minute of ['41', '42', '43']) {
      runs.push(
        await reconcileOpenRecords({
          now: at(`2026-11-22T08:${minute}:00Z`),
          limit: 1,
          limitAfterHold: 3,
          kinds: ['caseRecord'],
        }),
      );
      messages.push(...(await queued('CaseQueue')));
    }
    const afterDrain = await getStatusRecord(spaced[0].id);
    // Assess
    // Each run reads three: the second and third also read past the tried one (due 08:47, not queued).
    expect(runs.map((run) => run.requeued.caseRecord)).toEqual([3, 2, 2]);
    expect(runs[0].deferred).toEqual(['caseRecord']);
    expect(messages.sort()).toEqual(idsOf([...due, ...spaced]));
    expect(runs[0].holds.crm).toMatchObject({ held: false, closedAt: '2026-11-22T08:40:00.000Z' });
    // Waited since the close, not since 08:00: the stuck-records alarm does not fire after every outage.
    expect(runs[0].oldestWaitSeconds).toBe(60);
    // Its spacing starts again (next time 5 minutes, not an hour), from the end of the while after the close.
    expect(afterDrain).toMatchObject({ requeues: 1, dueAt: '2026-11-22T09:45:00.000Z' });
    expect((await getStatusRecord(triedAfter.id))?.dueAt).toBe('2026-11-22T08:47:00.000Z');
  });

  it('queues again a record whose message expired during a 15-day outage', async () => {
    // Prepare: accepted at 08:00 on 22 November; the CRM held from 08:10 until 7 December; the queue holds no
    // message of it (SQS keeps one 14 days).
    const record = acceptedCase();
    await seedStatusRecords([record]);
    await openCrmHold('2026-11-22T08:10:00.000Z');
    const duringHold = await reconcileOpenRecords({ now: at('2026-12-07T08:00:00Z'), kinds: ['caseRecord'] });
    await queued('CaseQueue');
    await closeCrmHold('2026-12-07T09:00:00.000Z');
    // Act
    const afterClose = await reconcileOpenRecords({ now: at('2026-12-07T09:01:00Z'), kinds: ['caseRecord'] });
    // Assess
    expect(duringHold.probes.caseRecord).toBe(1);
    expect(afterClose.requeued.caseRecord).toBe(1);
    expect(await queued('CaseQueue')).toEqual([record.id]);
    expect(afterClose.oldestWaitSeconds).toBe(60);
  });
});
