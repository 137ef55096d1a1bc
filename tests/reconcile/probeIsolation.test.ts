/**
 * A held downstream's probe is always a live record (docs/behaviour.md#outages-and-holds, contract section 6: test
 * records never feed a hold), however many test records are open: against dynalite, fauxqs and the SAP sandbox,
 * the reconciler's and the worker's real code with the clock given. Test records wait in a partition of the `open`
 * index of their own (lib/delivery/isolation.ts openPartitions); one written before that, among the live ones, is
 * read past (mayProbe). Test records are still queued again while the live downstream is held.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptRecords } from '../../lib/intake/acceptRecords.ts';
import { createDownstreamHolds, type DownstreamHolds } from '../../lib/outage/hold.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { dueAfter } from '../../lib/records/due.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecords } from '../../lib/store/statusRecords.ts';
import type { SalesRegistration } from '../../lib/types.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';
import { deliverAt, OUTAGE } from '../delivery/support.ts';
import { afterFailedProbe, at, openHold, RECONCILE_AFTER_SECONDS, sale } from './support.ts';

/** The integrator's test client (config/clients.json, "mode": "test"). */
const TEST_CLIENT = 'example-dealer-test';

let stack: DeliveryStack;
let aws: Awaited<ReturnType<typeof freshAws>>;
let holds: DownstreamHolds;

beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(() => stack.stop());

beforeEach(async () => {
  // Each test its own table (holds included) and queues.
  aws = await freshAws();
  holds = createDownstreamHolds({ ...OUTAGE, afterFailures: 5 });
  stack.sap.outage.setDown(true);
});

const salesQueue = () => aws.resources.queues.SalesRegistrationQueue.url;

/** Every message now on the sales queue, as the event source hands them to the worker. */
const receiveAll = async (): Promise<SQSRecord[]> => {
  const records: SQSRecord[] = [];
  for (;;) {
    const out = await aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: salesQueue(), MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
    );
    if (!out.Messages?.length) return records;
    for (const message of out.Messages)
      records.push({
        messageId: message.MessageId ?? '',
        receiptHandle: message.ReceiptHandle ?? '',
        body: message.Body ?? '',
        attributes: { ApproximateReceiveCount: '1' },
        eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:queue',
      } as unknown as SQSRecord);
  }
};
const idOf = (message: SQSRecord): string => JSON.parse(message.body).id;

/**
 * An integrator testing all day: its test client keeps twelve `FAIL` sales open, each retried by the worker (the
 * SAP simulator) when its backoff is up, a new one sent whenever one ends `failed`.
 */
const integrator = () => {
  const messages = new Map<string, SQSRecord>();
  /** The integrator's traffic at `now`: new sales up to twelve open, and the worker's tries that are due. */
  const minute = async (now: Date) => {
    const statuses = await getStatusRecords([...messages.keys()], { consistent: true });
    const open = [...statuses.values()].filter((status) => status.status === 'accepted');
    const fresh = 12 - open.length;
    if (fresh > 0) {
      const records = Array.from(
        { length: fresh },
        () =>
          salesRegistrationInput({
            FrameNum: uniqueFrame('TFAIL'),
            Name: 'FAIL',
          }) as unknown as SalesRegistration,
      );
      const request = { requestId: `t-${now.toISOString()}`, owner: TEST_CLIENT, test: true, now };
      await acceptRecords({ kind: 'salesRegistration', records, ...request });
      for (const message of await receiveAll()) messages.set(idOf(message), message);
    }
    // The worker's retry is due RECONCILE_AFTER_SECONDS before the record's dueAt (lib/delivery/recordOutcome.ts).
    const retryDue = (status: StatusRecord) =>
      Date.parse(status.dueAt ?? '') - RECONCILE_AFTER_SECONDS * 1000 <= now.getTime();
    const due = open.filter(retryDue).map((status) => messages.get(status.id) as SQSRecord);
    const received = [...messages.values()].filter((message) => !statuses.has(idOf(message)));
    await deliverAt([...due, ...received], holds, now);
  };
  return { minute, ids: () => [...messages.keys()] };
};

describe('the probe of a held SAP, while a test client’s records retry in the simulator', () => {
  it('queues a live record in the first run once the probe is due, though twelve test records are due before it', async () => {
    // Prepare: SAP held since 06:00; three live sales whose probes failed at 07:57, 07:58 and 07:59 (the last claimed
    // the probe period to 07:59:30), each due again an hour out; the test client's FAIL sales retrying since 07:45.
    const heldSince = await openHold(holds, 'erp', '2026-11-22T06:00:00.000Z');
    const live = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(
        heldSince,
        `2026-11-22T${hhmm}:00.000Z`,
        sale({
          record: salesRegistrationInput({ FrameNum: uniqueFrame('TLIVE') }) as unknown as SalesRegistration,
        }),
      ),
    );
    await seedStatusRecords(live);
    expect(await holds.claimProbe('erp', at('2026-11-22T07:59:00Z'))).toBe(true);
    const testTraffic = integrator();
    for (let minute = 0; minute < 14; minute++)
      await testTraffic.minute(at(dueAfter(at('2026-11-22T07:45:10Z'), minute * 60)));
    // Act: SAP back at 07:59:45; the reconciler every minute from 07:59:10, test traffic going on, until a live
    // record is the probe.
    const runs: { time: string; probes: number; probed: string[] }[] = [];
    for (let minute = 0; minute <= 20; minute++) {
      const now = dueAfter(at('2026-11-22T07:59:10Z'), minute * 60);
      if (minute === 1) stack.sap.outage.setDown(false);
      await testTraffic.minute(at(now));
      const run = await reconcileOpenRecords({ now: at(now), kinds: ['salesRegistration'] });
      const queued = await receiveAll();
      const probed = queued.map(idOf).filter((id) => !testTraffic.ids().includes(id));
      runs.push({ time: now.slice(11, 19), probes: run.probes.salesRegistration, probed });
      // The worker takes the live probe and SAP answers it.
      if (probed.length > 0) {
        await deliverAt(
          queued.filter((message) => probed.includes(idOf(message))),
          holds,
          at(dueAfter(at(now), 10)),
        );
        break;
      }
    }
    // Assess
    // The probe not due at 07:59:10; a live record the probe in the run at 08:00:10, the one tried least recently.
    expect(runs).toEqual([
      { time: '07:59:10', probes: 0, probed: [] },
      { time: '08:00:10', probes: 1, probed: [live[0].id] },
    ]);
    const testIds = testTraffic.ids();
    expect(testIds.length).toBeGreaterThan(12);
    // Test records due before the live ones throughout: twelve open, each due within minutes.
    const testOpen = [...(await getStatusRecords(testIds)).values()].filter((s) => s.status === 'accepted');
    expect(testOpen).toHaveLength(12);
    expect(testOpen.every((s) => (s.dueAt ?? '') < (live[0].dueAt ?? ''))).toBe(true);
    // SAP delivered it, which closed the hold; no test record ever reached SAP.
    expect(stack.sap.registrations.map((r) => r.RegistrationId)).toContain(live[0].id);
    expect(stack.sap.registrations.some((r) => testIds.includes(r.RegistrationId as string))).toBe(false);
    expect(await holds.holdState('erp', { fresh: true })).toMatchObject({ held: false });
    expect((await getStatusRecords([live[0].id])).get(live[0].id)?.status).toBe('delivered');
  });

  it('reads past test records written among the live ones before they had a partition of their own', async () => {
    // Prepare: SAP held since 06:00, its probe due; three live sales put off an hour by their failed probes, and
    // twelve test sales retrying, written with the live records' `openKind` (before test records had their own),
    // every one due before the live ones.
    const heldSince = await openHold(holds, 'erp', '2026-11-22T06:00:00.000Z');
    const live = ['07:57', '07:58', '07:59'].map((hhmm) =>
      afterFailedProbe(heldSince, `2026-11-22T${hhmm}:00.000Z`, sale({})),
    );
    const olderTest = Array.from({ length: 12 }, (_, i) =>
      acceptedCase(
        sale({
          owner: TEST_CLIENT,
          test: true,
          acceptedAt: '2026-11-22T07:40:00.000Z',
          updatedAt: dueAfter(at('2026-11-22T07:50:00Z'), i * 10),
          attempts: 1,
          tries: 1,
          dueAt: dueAfter(at('2026-11-22T07:56:00Z'), i * 10),
        }),
      ),
    );
    await seedStatusRecords([...live, ...olderTest]);
    // Act
    const run = await reconcileOpenRecords({ now: at('2026-11-22T08:00:10Z'), kinds: ['salesRegistration'] });
    const queued = (await receiveAll()).map(idOf);
    // Assess: the live record tried least recently is the probe, and the only record queued (test records in the
    // live partition wait as live ones do while SAP is held; they settle within their tries).
    expect(run.probes.salesRegistration).toBe(1);
    expect(queued.filter((id) => live.some((record) => record.id === id))).toEqual([live[0].id]);
    expect(queued).toHaveLength(1);
  });

  it('queues test records again while SAP is held, and only the probe of the live ones', async () => {
    // Prepare: SAP held since 06:00, its probe due at 08:00; a live and a test sale accepted at 07:50 whose
    // messages were lost, both due at 07:55.
    await openHold(holds, 'erp', '2026-11-22T06:00:00.000Z');
    const records = Array.from({ length: 4 }, () =>
      salesRegistrationInput({ FrameNum: uniqueFrame('THELD') }),
    ) as unknown as SalesRegistration[];
    const now = at('2026-11-22T07:50:00Z');
    const liveIds = await acceptRecords({
      kind: 'salesRegistration',
      records: records.slice(0, 2),
      requestId: 'l',
      owner: 'example-dealer',
      now,
    });
    const testIds = await acceptRecords({
      kind: 'salesRegistration',
      records: records.slice(2),
      requestId: 't',
      owner: TEST_CLIENT,
      test: true,
      now,
    });
    await receiveAll();
    // Act
    const run = await reconcileOpenRecords({ now: at('2026-11-22T08:00:10Z'), kinds: ['salesRegistration'] });
    const queued = (await receiveAll()).map(idOf).sort();
    // Assess: both test records, and one live record as the probe.
    expect(run).toMatchObject({ probes: { salesRegistration: 1 }, requeued: { salesRegistration: 3 } });
    expect(queued.filter((id) => testIds.includes(id))).toEqual([...testIds].sort());
    expect(queued.filter((id) => liveIds.includes(id))).toHaveLength(1);
    // A test record's wait never moves the stuck-records alarm.
    expect(run.oldestWaitSeconds).toBe(0);
  });
});
