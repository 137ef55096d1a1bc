/**
 * Test mode through the worker (docs/API.md, "Test mode"), against dynalite, fauxqs, the real SAP and Salesforce
 * sandboxes and an EventBridge stand-in: a test client's records are answered by the simulators as their last names
 * say, while SAP is down and held; nothing of theirs reaches a sandbox, the hold or a dead-letter queue; a live and a
 * test record never share a call; look-ups and events say `test`.
 */
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { readHold } from '../../lib/outage/holdStore.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { outputDuring } from '../../testkit/emittedOutput.ts';
import { jsonPost, lambdaContext, statusGet } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { DELIVERY, deliverAt, forgetHolds, OUTAGE, receive, secondsAfter } from './support.ts';

vi.hoisted(() => {
  // The test run turns metrics off (vitest.config.ts); one test here reads the ones the worker publishes.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

let stack: DeliveryStack;
let aws: DeliveryStack['aws'];
let sap: DeliveryStack['sap'];
let salesforce: DeliveryStack['salesforce'];
let bus: DeliveryStack['bus'];
let salesQueue: string;
let caseQueue: string;

beforeAll(async () => {
  stack = await startDeliveryStack();
  ({ aws, sap, salesforce, bus, salesQueue, caseQueue } = stack);
});
afterAll(() => stack.stop());
beforeEach(async () => {
  sap.outage.setDown(false);
  await Promise.all([aws.drain(salesQueue), aws.drain(caseQueue), forgetHolds(aws.dynamoEndpoint)]);
  resetDownstreamClients();
});

const T0 = new Date();
const idOf = (record: SQSRecord): string => JSON.parse(record.body).id;

/** Sales accepted in one request by a client (the test client's key, or the live dealer's). */
const acceptSalesAs = async (key: string, names: string[]): Promise<string[]> => {
  const records = names.map((Name) => salesRegistrationInput({ FrameNum: uniqueFrame('TMODE'), Name }));
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', records, { 'x-api-key': key }),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  return JSON.parse(response.body).registrations.map((r: { id: string }) => r.id);
};

/** Cases accepted one by one by the test client. */
const acceptTestCases = async (surnames: string[]): Promise<string[]> => {
  const ids: string[] = [];
  for (const surname of surnames) {
    const response = await caseHandler(
      jsonPost('/crm/case', caseInput({ surname, frameNo: uniqueFrame('TMODE') }), {
        'x-api-key': testKeys.testDealer,
      }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
    ids.push(JSON.parse(response.body).CrmId);
  }
  return ids;
};

/** SAP's delivery requests that name any of these ids (a POST of one, or a `$batch`). */
const sapRequestsNaming = (ids: readonly string[]) =>
  sap.requests.filter((request) => request.method === 'POST' && ids.some((id) => request.body.includes(id)));

/** Delivers the messages again and again, the clock moving 10 minutes a round, until no record is `accepted`. */
const untilSettled = async (
  records: SQSRecord[],
  holds = createDownstreamHolds(OUTAGE),
  tally = new OutcomeTally(),
) => {
  for (let round = 1; round <= DELIVERY.maxAttempts + 2; round++) {
    const open = [];
    for (const record of records)
      if ((await getStatusRecord(idOf(record)))?.status === 'accepted') open.push(record);
    if (open.length === 0) return;
    await deliverAt(open, holds, secondsAfter(T0, round * 600), tally);
  }
};

/** The sum of a metric over EMF documents of one mode (a test record's carry the dimension `mode: test`). */
const counted = (documents: Record<string, unknown>[], name: string, mode: 'live' | 'test') =>
  documents
    .filter((document) => (document.mode === 'test') === (mode === 'test'))
    .reduce(
      (sum, document) => sum + (typeof document[name] === 'number' ? (document[name] as number) : 0),
      0,
    );

describe('test mode through the worker', () => {
  it('answers test sales as their last names say while SAP is down and held; SAP, the hold and the dead letters see nothing of them', async () => {
    // Prepare: SAP down and held; four test sales and one live sale.
    sap.outage.setDown(true);
    const holds = createDownstreamHolds(OUTAGE);
    await holds.noteOutcomes(
      'erp',
      ['x1', 'x2', 'x3'].map((recordId) => ({ recordId, kind: 'transient' as const })),
      secondsAfter(T0, -10),
    );
    const holdBefore = await readHold('erp');
    const testIds = await acceptSalesAs(testKeys.testDealer, ['Sample', 'REJECT', 'retry', 'Fail']);
    const [liveId] = await acceptSalesAs(testKeys.dealer, ['Sample']);
    const { records, byId } = await receive(aws.sqs, salesQueue, 5);

    // Act: the five in one batch, then the test ones again until settled.
    const first = await deliverAt(records, holds, T0);
    await untilSettled(testIds.map(byId), holds);

    // Assess
    const byRecord = Object.fromEntries(records.map((record, index) => [idOf(record), first[index]]));
    expect(byRecord[liveId]).toBe('DeliveryHeldError');
    const [sample, reject, retry, fail] = await Promise.all(testIds.map((id) => getStatusRecord(id)));
    expect(sample).toMatchObject({ status: 'delivered', attempts: 1, test: true });
    expect(sample?.downstreamId).toMatch(/^49\d{6}$/);
    expect(reject).toMatchObject({ status: 'rejected', attempts: 1, test: true });
    expect(reject?.error).toMatch(/refused by the SAP simulator/);
    expect(retry).toMatchObject({ status: 'delivered', attempts: 3, test: true });
    expect(fail).toMatchObject({ status: 'failed', attempts: DELIVERY.maxAttempts, test: true });
    expect(sapRequestsNaming(testIds)).toEqual([]);
    expect(sap.outage.state().deliveryCallsWhileDown).toBe(0);
    expect(await readHold('erp')).toEqual(holdBefore);
    expect(await aws.drain(aws.resources.queues.SalesRegistrationDeadLetterQueue.url)).toEqual([]);
    const live = await getStatusRecord(liveId);
    expect(live?.status).toBe('accepted');
    expect(live?.tries ?? 0).toBe(0);
  });

  it('counts test records apart: their outcomes are metrics of mode test, no live metric and no hold metric moves', async () => {
    // Prepare: a test sale that fails (FAIL) and a live sale, SAP up.
    await acceptSalesAs(testKeys.testDealer, ['Fail']);
    await acceptSalesAs(testKeys.dealer, ['Sample']);
    const { records } = await receive(aws.sqs, salesQueue, 2);
    const tally = new OutcomeTally();
    // Act: delivered until settled, the invocations' tally published as the worker does.
    const { metrics } = await outputDuring(async () => {
      await untilSettled(records, createDownstreamHolds(OUTAGE), tally);
      tally.publish();
    });
    // Assess
    expect(counted(metrics, 'failed', 'test')).toBe(1);
    expect(counted(metrics, 'retried', 'test')).toBe(DELIVERY.maxAttempts - 1);
    expect(counted(metrics, 'delivered', 'live')).toBe(1);
    expect(counted(metrics, 'failed', 'live')).toBe(0);
    expect(counted(metrics, 'retried', 'live')).toBe(0);
    expect(metrics.filter((document) => 'downstreamHeld' in document)).toEqual([]);
  });

  it('never sends a test record to SAP when its message says live, nor a live one to the simulator: the stored record decides', async () => {
    // Prepare: a test sale and a live sale whose messages each claim the other mode.
    const [testId] = await acceptSalesAs(testKeys.testDealer, ['Sample']);
    const [liveId] = await acceptSalesAs(testKeys.dealer, ['Sample']);
    const { byId } = await receive(aws.sqs, salesQueue, 2);
    const claiming = (record: SQSRecord, test: boolean): SQSRecord => {
      const { test: _test, ...body } = JSON.parse(record.body);
      return { ...record, body: JSON.stringify(test ? { ...body, test: true } : body) };
    };
    const from = sap.requests.length;
    // Act
    const results = await deliverAt(
      [claiming(byId(testId), false), claiming(byId(liveId), true)],
      createDownstreamHolds(OUTAGE),
      T0,
    );
    // Assess: neither sent anywhere; both wait, accepted, their tries given back, and each is delivered as it is
    // once its own message comes.
    expect(results).toEqual(['DeliveryRetryLaterError', 'DeliveryRetryLaterError']);
    expect(sap.requests.slice(from).filter((request) => request.method === 'POST')).toEqual([]);
    for (const id of [testId, liveId])
      expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', attempts: 0 });
    await deliverAt([byId(testId), byId(liveId)], createDownstreamHolds(OUTAGE), secondsAfter(T0, 600));
    expect(await getStatusRecord(testId)).toMatchObject({ status: 'delivered', test: true });
    expect(await getStatusRecord(liveId)).toMatchObject({ status: 'delivered' });
    expect(sapRequestsNaming([testId])).toEqual([]);
    expect(sapRequestsNaming([liveId])).toHaveLength(1);
  });

  it('answers test cases with Salesforce-style ids, and never a Salesforce request', async () => {
    // Prepare
    const ids = await acceptTestCases(['Sample', 'Reject']);
    const { records } = await receive(aws.sqs, caseQueue, 2);
    const before = salesforce.requests.length;
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess
    expect(results).toEqual(['done', 'done']);
    const [delivered, refused] = await Promise.all(ids.map((id) => getStatusRecord(id)));
    expect(delivered?.downstreamId).toMatch(/^500[0-9A-Za-z]{15}$/);
    expect(refused).toMatchObject({ status: 'rejected', attempts: 1 });
    expect(refused?.error).toMatch(/FIELD_CUSTOM_VALIDATION_EXCEPTION|refused by the Salesforce simulator/);
    expect(salesforce.requests.length).toBe(before);
  });

  it('never puts a live and a test record in one call, and calls SAP for the live ones only', async () => {
    // Prepare: three live and three test sales, interleaved in one batch.
    const liveIds = await acceptSalesAs(testKeys.dealer, ['A', 'B', 'C']);
    const testIds = await acceptSalesAs(testKeys.testDealer, ['D', 'E', 'F']);
    const { byId } = await receive(aws.sqs, salesQueue, 6);
    const batch = liveIds.flatMap((id, index) => [byId(id), byId(testIds[index])]);
    const from = sap.requests.length;
    // Act
    const results = await deliverAt(batch, createDownstreamHolds(OUTAGE), T0);
    // Assess: one `$batch` with exactly the live three; every record delivered.
    expect(results).toEqual(Array(6).fill('done'));
    const calls = sap.requests.slice(from).filter((request) => request.method === 'POST');
    expect(calls).toHaveLength(1);
    for (const id of liveIds) expect(calls[0].body).toContain(id);
    for (const id of testIds) expect(calls[0].body).not.toContain(id);
  });

  it('says test in the look-up (never heldSince) and in the events; a live record says neither', async () => {
    // Prepare: SAP held, so a live record's look-up shows heldSince.
    const holds = createDownstreamHolds(OUTAGE);
    await holds.noteOutcomes(
      'erp',
      ['x1', 'x2', 'x3'].map((recordId) => ({ recordId, kind: 'transient' as const })),
      T0,
    );
    const [testId] = await acceptSalesAs(testKeys.testDealer, ['Retry']);
    const [liveId] = await acceptSalesAs(testKeys.dealer, ['Sample']);
    const { byId } = await receive(aws.sqs, salesQueue, 2);
    const published = bus.entries.length;
    await untilSettled([byId(testId)], holds);
    // Act
    const lookUp = async (id: string, key: string) =>
      JSON.parse(
        (
          await recordStatus(
            statusGet(`/erp/sales_registration/${id}`, { id }, { 'x-api-key': key }),
            lambdaContext(),
          )
        ).body,
      );
    const testView = await lookUp(testId, testKeys.testDealer);
    const liveView = await lookUp(liveId, testKeys.dealer);
    // Assess
    expect(testView).toMatchObject({ status: 'delivered', attempts: 3, test: true });
    expect(liveView.test).toBeUndefined();
    expect(liveView.heldSince).toBeDefined();
    const events = bus.entries.slice(published).map((entry) => JSON.parse(entry.Detail ?? '{}'));
    expect(events.filter((event) => event.recordId === testId)).toEqual([
      expect.objectContaining({ state: 'delivered', test: true }),
    ]);
  });
});
