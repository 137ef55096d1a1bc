/**
 * The worker under a downstream hold (docs/behaviour.md#outages-and-holds), against dynalite,
 * fauxqs and the real SAP and Salesforce sandboxes, the clock given: the hold opens after the threshold across two
 * records, then messages wait unclaimed with no downstream call; one probe per OUTAGE_PROBE_SECONDS, a failed one
 * spending no try; the first successful probe closes it and every record is delivered once; a single bad record
 * still fails; a refusal never holds; the Salesforce allowance holds the CRM; two worker instances share one hold.
 */
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { createDeliveryWorker } from '../../lib/delivery/worker.ts';
import { logger } from '../../lib/observability/logger.ts';
import { createDownstreamHolds, type DownstreamHolds, holdStates } from '../../lib/outage/hold.ts';
import { readHold } from '../../lib/outage/holdStore.ts';
import { reconcileSettings } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { lambdaContext } from '../../testkit/factories/apiGateway.ts';
import {
  acceptCases,
  acceptSales,
  deliverAt,
  forgetHolds,
  OUTAGE,
  receive,
  secondsAfter,
} from './support.ts';

let stack: DeliveryStack;
let aws: DeliveryStack['aws'];
let sap: DeliveryStack['sap'];
let salesforce: DeliveryStack['salesforce'];
let salesQueue: string;
let caseQueue: string;

beforeAll(async () => {
  stack = await startDeliveryStack();
  ({ aws, sap, salesforce, salesQueue, caseQueue } = stack);
});
afterAll(() => stack.stop());

beforeEach(async () => {
  sap.outage.setDown(false);
  salesforce.outage.setDown(false);
  salesforce.apiUsage.set({ used: 0 });
  await Promise.all([aws.drain(salesQueue), aws.drain(caseQueue), forgetHolds(aws.dynamoEndpoint)]);
  resetDownstreamClients();
});

const T0 = new Date();
/** Requests the SAP sandbox received (deliveries, CSRF fetches), as a count to compare. */
const sapCalls = () => sap.requests.length;
const triesOf = async (ids: string[]) =>
  Promise.all(ids.map(async (id) => (await getStatusRecord(id))?.tries));

/** SAP down; three registrations, each failing alone in turn: the third failure (two records) opens the hold. */
const openErpHold = async (holds = createDownstreamHolds(OUTAGE)) => {
  const ids = await acceptSales(3);
  const { byId } = await receive(aws.sqs, salesQueue, 3);
  sap.outage.setDown(true);
  const opening = [];
  for (const [index, id] of ids.entries())
    opening.push(await deliverAt([byId(id)], holds, secondsAfter(T0, index)));
  return { ids, byId, holds, opening, messages: ids.map(byId) };
};

/** Counts earlier calls of other records in the ERP hold, as a worker did before `T0`: `1` failed whole, `0` answered. */
const countCalls = async (holds: DownstreamHolds, calls: string) => {
  for (const [index, call] of [...calls].entries())
    await holds.noteOutcomes(
      'erp',
      [{ recordId: `earlier${index}`, kind: call === '1' ? 'transient' : 'delivered' }],
      secondsAfter(T0, index - calls.length - 60),
    );
};

/** The EMF documents (CloudWatch embedded metric format) written to stdout while `act` runs, and its value. */
const metricsDuring = async <T>(act: () => Promise<T>) => {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  try {
    const value = await act();
    const documents = lines
      .flatMap((text) => text.split('\n'))
      .filter((line) => line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { documents, value };
  } finally {
    process.stdout.write = write;
  }
};

/** The `downstreamHeld` readings among EMF documents: its `downstream` dimension and value. */
const heldReadings = (documents: Record<string, unknown>[]) =>
  documents
    .filter((document) => {
      const { CloudWatchMetrics } = document._aws as {
        CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[];
      };
      return CloudWatchMetrics.some(
        ({ Dimensions, Metrics }) =>
          Metrics.some(({ Name }) => Name === 'downstreamHeld') && Dimensions.flat().includes('downstream'),
      );
    })
    .map((document) => ({ downstream: document.downstream, value: document.downstreamHeld }));

describe('the worker under a downstream hold', () => {
  it('opens the hold after the threshold across two records, then hides messages unclaimed without any call', async () => {
    // Prepare
    const { ids, holds, opening, messages } = await openErpHold();
    const triesBefore = await triesOf(ids);
    const callsBefore = sapCalls();
    // Act
    const held = await deliverAt(messages, holds, secondsAfter(T0, 5));
    // Assess
    expect(opening).toEqual([
      ['DeliveryRetryLaterError'],
      ['DeliveryRetryLaterError'],
      ['DeliveryHeldError'],
    ]);
    expect((await holdStates()).erp).toMatchObject({ held: true, reason: 'outage' });
    expect(held).toEqual(['DeliveryHeldError', 'DeliveryHeldError', 'DeliveryHeldError']);
    expect(sapCalls()).toBe(callsBefore);
    // SAP refused the CSRF fetch each time: no record was sent, so each gave its try back (callFailures); the
    // call that opened the hold gave its try back; the held batch claimed nothing.
    expect(triesBefore).toEqual([0, 0, 0]);
    expect(await Promise.all(ids.map(async (id) => (await getStatusRecord(id))?.callFailures))).toEqual([
      1,
      1,
      undefined,
    ]);
    expect(await triesOf(ids)).toEqual(triesBefore);
    for (const id of ids) {
      const status = await getStatusRecord(id);
      expect(status).toMatchObject({ status: 'accepted' });
      expect(status?.leaseUntil).toBeUndefined();
      expect(status?.pendingEvents ?? []).toEqual([]);
    }
  });

  it('probes once per OUTAGE_PROBE_SECONDS, a failed probe spends no try, and the first success delivers each record once', async () => {
    // Prepare
    const { ids, holds, messages } = await openErpHold();
    const triesHeld = await triesOf(ids);
    // Act: the probe due 30 s after the opening (at 2 s) fails; a batch between probes calls nothing.
    let calls = sapCalls();
    const failedProbe = await deliverAt(messages, holds, secondsAfter(T0, 33));
    const probeCalls = sapCalls() - calls;
    calls = sapCalls();
    const between = await deliverAt(messages, holds, secondsAfter(T0, 50));
    const betweenCalls = sapCalls() - calls;
    const triesAfterProbe = await triesOf(ids);
    sap.outage.setDown(false);
    const tooEarly = await deliverAt(messages, holds, secondsAfter(T0, 60));
    const closing = await deliverAt(messages, holds, secondsAfter(T0, 64));
    // Assess
    expect(failedProbe).toEqual(['DeliveryHeldError', 'DeliveryHeldError', 'DeliveryHeldError']);
    expect(probeCalls).toBe(1); // the CSRF fetch, refused: the outage answers everything 503
    expect(between).toEqual(['DeliveryHeldError', 'DeliveryHeldError', 'DeliveryHeldError']);
    expect(betweenCalls).toBe(0);
    expect(triesAfterProbe).toEqual(triesHeld);
    expect(tooEarly).toEqual(['DeliveryHeldError', 'DeliveryHeldError', 'DeliveryHeldError']);
    expect(closing).toEqual(['done', 'done', 'done']);
    expect((await holdStates()).erp).toEqual({ held: false });
    for (const id of ids) {
      expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered' });
      expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
    }
  });

  it('hides the record of a failed probe half as long as the hold has lasted, and dates its re-queue after that', async () => {
    // Prepare: the hold opened at 2 s; its probe is due from 32 s, and none is claimed until 302 s.
    const { ids, holds, messages } = await openErpHold();
    const heldSince = (await readHold('erp')).heldSince;
    const probeAt = secondsAfter(T0, 302);
    const info = vi.spyOn(logger, 'info');
    // Act: the probe fails (SAP still down) 300 s into the hold.
    const probed = await deliverAt([messages[0]], holds, probeAt);
    const held = info.mock.calls.filter(([message]) => String(message).startsWith('downstream held'));
    info.mockRestore();
    // Assess
    expect(probed).toEqual(['DeliveryHeldError']);
    expect(heldSince).toBe(secondsAfter(T0, 2).toISOString());
    // Hidden for 150 s (half of 300 s, more than the 30 s probe period), then the reconciler's wait on top.
    const { reconcileAfterSeconds } = reconcileSettings();
    expect(await getStatusRecord(ids[0])).toMatchObject({
      status: 'accepted',
      tries: 0, // its failure before the hold was a refused CSRF fetch, and the probe's try was given back
      callFailures: 1,
      dueAt: secondsAfter(probeAt, 150 + reconcileAfterSeconds).toISOString(),
    });
    expect(held).toEqual([
      [
        'downstream held: try given back, message waits',
        expect.objectContaining({ recordId: ids[0], heldSince, delaySeconds: 150 }),
      ],
    ]);
  });

  it('logs the opening once as a warning and the closing with how long the hold lasted', async () => {
    // Prepare
    const warn = vi.spyOn(logger, 'warn');
    const info = vi.spyOn(logger, 'info');
    const holdLines = () =>
      [...warn.mock.calls, ...info.mock.calls].filter(([message]) =>
        /^downstream hold(?! held: try)|^downstream held: records/.test(String(message)),
      );
    // Act: the hold opens at 2 s; a probe at 40 s finds SAP back.
    const { messages, holds } = await openErpHold();
    const opened = holdLines();
    sap.outage.setDown(false);
    await deliverAt(messages, holds, secondsAfter(T0, 40));
    const all = holdLines();
    warn.mockRestore();
    info.mockRestore();
    // Assess
    const heldSince = secondsAfter(T0, 2).toISOString();
    const line = { downstream: 'erp', reason: 'outage', heldSince };
    // The opening line says what the call that opened it was: one sale, no part answered (SAP down).
    const openingLine = { ...line, callRecords: 1, answeredParts: 0 };
    expect(opened).toEqual([['downstream held: records wait without spending tries', openingLine]]);
    expect(all).toEqual([
      ['downstream held: records wait without spending tries', openingLine],
      ['downstream hold closed', { ...line, heldSeconds: 38 }],
    ]);
  });

  it('reports downstreamHeld 1 for the downstream when it opens the hold and 0 when it closes it', async () => {
    // Prepare: the test run turns metrics off (vitest.config.ts); this test reads the ones the worker publishes.
    const disabled = process.env.POWERTOOLS_METRICS_DISABLED;
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    try {
      // Act: the hold opens at 2 s; a probe at 40 s finds SAP back.
      const { documents: opening, value: opened } = await metricsDuring(() => openErpHold());
      sap.outage.setDown(false);
      const { documents: closing } = await metricsDuring(() =>
        deliverAt(opened.messages, opened.holds, secondsAfter(T0, 40)),
      );
      // Assess: one reading each, with the downstream as its dimension (the held alarm is set on it).
      expect(heldReadings(opening)).toEqual([{ downstream: 'erp', value: 1 }]);
      expect(heldReadings(closing)).toEqual([{ downstream: 'erp', value: 0 }]);
    } finally {
      process.env.POWERTOOLS_METRICS_DISABLED = disabled;
    }
  });

  it('when the hold cannot be written, takes a failed probe as held and any other failure as the record’s own', async () => {
    // Prepare: the hold opened; then its store refuses the outcomes' write (the real holds otherwise).
    const { ids, holds, messages } = await openErpHold();
    const unwritable: DownstreamHolds = {
      ...holds,
      noteOutcomes: async () => {
        throw new Error('hold store unreachable');
      },
    };
    const [fresh] = await acceptSales(1);
    const { byId } = await receive(aws.sqs, salesQueue, 1);
    const error = vi.spyOn(logger, 'error');
    // Act: the probe due at 32 s fails (SAP down); later, with SAP up but refusing once, an ordinary call fails.
    const probed = await deliverAt([messages[0]], unwritable, secondsAfter(T0, 33));
    await forgetHolds(aws.dynamoEndpoint);
    sap.outage.setDown(false);
    sap.inject({ status: 503 });
    const ordinary = await deliverAt([byId(fresh)], unwritable, secondsAfter(T0, 40));
    const lines = error.mock.calls.filter(([message]) => message === 'downstream hold not updated');
    error.mockRestore();
    // Assess
    expect(probed).toEqual(['DeliveryHeldError']);
    expect(await getStatusRecord(ids[0])).toMatchObject({ status: 'accepted', tries: 0 });
    expect(ordinary).toEqual(['DeliveryRetryLaterError']);
    expect(await getStatusRecord(fresh)).toMatchObject({ status: 'accepted', tries: 1 });
    expect(lines).toEqual([
      ['downstream hold not updated', { downstream: 'erp', error: 'hold store unreachable' }],
      ['downstream hold not updated', { downstream: 'erp', error: 'hold store unreachable' }],
    ]);
  });

  it('probes a batch larger than one call with one call; the rest waits unclaimed for the next probe', async () => {
    // Prepare: the hold open; five more registrations; $batch calls of two (ERP_BATCH_SIZE).
    const { ids, byId, holds } = await openErpHold();
    const more = await acceptSales(5);
    const { byId: moreById } = await receive(aws.sqs, salesQueue, 5);
    const batch = [...ids.map(byId), ...more.map(moreById)];
    process.env.ERP_BATCH_SIZE = '2';
    resetDownstreamClients();
    try {
      const calls = sapCalls();
      const triesBefore = await triesOf([...ids, ...more]);
      const info = vi.spyOn(logger, 'info');
      // Act: the probe due 30 s after the opening, with eight messages.
      const probed = await deliverAt(batch, holds, secondsAfter(T0, 33));
      const waiting = info.mock.calls.filter(
        ([message]) => message === 'downstream held: messages wait unclaimed',
      );
      info.mockRestore();
      // Assess: one call (the CSRF fetch, refused while SAP is down), never four; nobody spent a try.
      expect(sapCalls() - calls).toBe(1);
      expect(probed).toEqual(Array.from({ length: 8 }, () => 'DeliveryHeldError'));
      expect(await triesOf([...ids, ...more])).toEqual(triesBefore);
      expect((await holdStates()).erp).toMatchObject({ held: true });
      // The six past the probe's call wait as held messages do: since the opening, until the next probe.
      expect(waiting).toEqual([
        [
          'downstream held: messages wait unclaimed',
          {
            downstream: 'erp',
            reason: 'outage',
            heldSince: secondsAfter(T0, 2).toISOString(),
            messages: 6,
            delaySeconds: 30,
          },
        ],
      ]);
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('still fails a single bad record that keeps failing while others succeed, and never holds for it', async () => {
    // Prepare
    const holds = createDownstreamHolds(OUTAGE);
    const [bad, ...good] = await acceptSales(3);
    const { byId } = await receive(aws.sqs, salesQueue, 3);
    // Act: the bad record's calls fail (503), the others' in between succeed.
    const results = [];
    for (const [index, next] of [bad, good[0], bad, good[1], bad].entries()) {
      if (next === bad) sap.inject({ status: 503 });
      results.push(...(await deliverAt([byId(next)], holds, secondsAfter(T0, index))));
    }
    const dead = await aws.drain(aws.resources.queues.SalesRegistrationDeadLetterQueue.url);
    // Assess
    expect(results).toEqual(['DeliveryRetryLaterError', 'done', 'DeliveryRetryLaterError', 'done', 'done']);
    expect(await getStatusRecord(bad)).toMatchObject({ status: 'failed', tries: 3 });
    expect(dead.map((message) => message.id)).toEqual([bad]);
    expect((await holdStates()).erp).toEqual({ held: false });
  });

  it('still fails a single bad record after exactly DELIVERY_MAX_ATTEMPTS calls once the last calls all answered', async () => {
    // Prepare: the window of recent calls full of answers (the failure rate known: 0).
    const holds = createDownstreamHolds(OUTAGE);
    await countCalls(holds, '0'.repeat(OUTAGE.rateWindow));
    const [bad, ...good] = await acceptSales(3);
    const { byId } = await receive(aws.sqs, salesQueue, 3);
    // Act: the bad record's calls fail (503), the others' in between succeed.
    const results = [];
    for (const [index, next] of [bad, good[0], bad, good[1], bad].entries()) {
      if (next === bad) sap.inject({ status: 503 });
      results.push(...(await deliverAt([byId(next)], holds, secondsAfter(T0, index))));
    }
    // Assess: its own failures in the window never make it look like the downstream's.
    expect(results).toEqual(['DeliveryRetryLaterError', 'done', 'DeliveryRetryLaterError', 'done', 'done']);
    expect(await getStatusRecord(bad)).toMatchObject({ status: 'failed', tries: 3, loneFailureChance: 0 });
    expect((await holdStates()).erp).toEqual({ held: false });
  });

  it('gives a record failing alone its try back while the downstream fails often, its chance kept', async () => {
    // Prepare: 9 of the last 20 calls failed whole, never two in a row: no hold.
    const holds = createDownstreamHolds(OUTAGE);
    await countCalls(holds, `${'10'.repeat(9)}00`);
    const [id] = await acceptSales(1);
    const { byId } = await receive(aws.sqs, salesQueue, 1);
    sap.inject({ status: 503 });
    // Act
    const results = await deliverAt([byId(id)], holds, T0);
    // Assess
    expect(results).toEqual(['DeliveryRetryLaterError']);
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      tries: 0,
      loneFailureChance: 0.45,
    });
    expect((await holdStates()).erp).toEqual({ held: false });
  });

  it('never holds for permanent refusals, however many in a row', async () => {
    // Prepare
    const holds = createDownstreamHolds(OUTAGE);
    const ids = await acceptSales(5);
    const { byId } = await receive(aws.sqs, salesQueue, 5);
    // Act
    for (const [index, id] of ids.entries()) {
      sap.inject({ status: 400, message: 'Dealer 1234 is blocked for registrations' });
      await deliverAt([byId(id)], holds, secondsAfter(T0, index));
    }
    // Assess
    expect((await holdStates()).erp).toEqual({ held: false });
    expect((await readHold('erp')).failures).toBe(0);
    for (const id of ids) expect(await getStatusRecord(id)).toMatchObject({ status: 'rejected' });
  });

  it('holds the CRM when Salesforce reports API usage at the share, until a probe shows it below', async () => {
    // Prepare: 80 % of the allowance used (the sandbox reports it on every answer).
    const holds = createDownstreamHolds(OUTAGE);
    salesforce.apiUsage.set({ used: 92_000, allowed: 115_000 });
    const [first, second] = await acceptCases(2);
    const { byId } = await receive(aws.sqs, caseQueue, 2);
    const patches = () => salesforce.requests.filter((r) => r.method === 'PATCH').length;
    // Act
    const answered = await deliverAt([byId(first)], holds, T0);
    const opened = (await holdStates()).crm;
    const before = patches();
    const held = await deliverAt([byId(second)], holds, secondsAfter(T0, 5));
    const heldPatches = patches() - before;
    salesforce.apiUsage.set({ used: 1_000 });
    const probed = await deliverAt([byId(second)], holds, secondsAfter(T0, 31));
    // Assess
    expect(answered).toEqual(['done']);
    expect(opened).toMatchObject({ held: true, reason: 'api-usage' });
    expect(held).toEqual(['DeliveryHeldError']);
    expect(heldPatches).toBe(0);
    expect(probed).toEqual(['done']);
    expect((await holdStates()).crm).toEqual({ held: false });
    expect(await getStatusRecord(second)).toMatchObject({ status: 'delivered', tries: 1 });
  });

  it('probes the CRM with one Collections call of its whole batch, however small ERP_BATCH_SIZE is', async () => {
    // Prepare: the allowance at the share holds the CRM; three cases wait; SAP's calls would be of two.
    const holds = createDownstreamHolds(OUTAGE);
    salesforce.apiUsage.set({ used: 92_000, allowed: 115_000 });
    const [first, ...waiting] = await acceptCases(4);
    const { byId } = await receive(aws.sqs, caseQueue, 4);
    await deliverAt([byId(first)], holds, T0);
    process.env.ERP_BATCH_SIZE = '2';
    resetDownstreamClients();
    try {
      salesforce.apiUsage.set({ used: 1_000 });
      // Act: the probe due 30 s after the opening, with the three.
      const probed = await deliverAt(waiting.map(byId), holds, secondsAfter(T0, 31));
      // Assess: all three in the probe's one call, none left waiting for the next.
      expect(probed).toEqual(['done', 'done', 'done']);
      expect((await holdStates()).crm).toEqual({ held: false });
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('fails a batch whose messages all failed, some held and one no queued record, as a whole (the Errors alarm)', async () => {
    // Prepare: the hold opened just now (real clock: within the probe period); a message intake never wrote.
    const { messages } = await openErpHold(createDownstreamHolds(OUTAGE));
    const worker = createDeliveryWorker({ holds: createDownstreamHolds(OUTAGE) });
    const malformed = { ...messages[0], messageId: 'not-a-record', body: '{"id":' };
    // Act
    const answer = await worker({ Records: [...messages, malformed] }, lambdaContext()).catch(
      (error: Error) => error.name,
    );
    // Assess: only a batch whose every message waits out the hold is answered without an invocation error.
    expect(answer).toBe('FullBatchFailureError');
  });

  it('is one hold for two worker instances: one opens it, the other then calls nothing, and only one probes', async () => {
    // Prepare: instance A opens the hold; B has its own view (cache) of the same store.
    const { messages } = await openErpHold(createDownstreamHolds(OUTAGE));
    const workerB = createDeliveryWorker({ holds: createDownstreamHolds(OUTAGE) });
    const workerC = createDeliveryWorker({ holds: createDownstreamHolds(OUTAGE) });
    const event = (records: SQSRecord[]) => ({ Records: records });
    const failure = (record: SQSRecord) => ({ itemIdentifier: record.messageId });
    const calls = sapCalls();
    // Act: two invocations at once, within the probe period (real clock: the hold opened just now).
    const answers = await Promise.allSettled([
      workerB(event(messages.slice(0, 2)), lambdaContext()),
      workerC(event(messages.slice(2)), lambdaContext()),
    ]);
    const heldCalls = sapCalls() - calls;
    // ... and two instances asking at the same probe time: one probe between them.
    const [d, e] = [createDownstreamHolds(OUTAGE), createDownstreamHolds(OUTAGE)];
    const beforeProbe = sapCalls();
    const probes = await Promise.all([
      deliverAt(messages.slice(0, 2), d, secondsAfter(T0, 40)),
      deliverAt(messages.slice(2), e, secondsAfter(T0, 40)),
    ]);
    // Assess
    // Every message held, each reported (SQS keeps it), without an invocation error (the Errors alarm).
    expect(answers).toEqual([
      { status: 'fulfilled', value: { batchItemFailures: messages.slice(0, 2).map(failure) } },
      { status: 'fulfilled', value: { batchItemFailures: messages.slice(2).map(failure) } },
    ]);
    expect(heldCalls).toBe(0);
    expect(sapCalls() - beforeProbe).toBe(1);
    expect(probes.flat()).toEqual(['DeliveryHeldError', 'DeliveryHeldError', 'DeliveryHeldError']);
  });
});
