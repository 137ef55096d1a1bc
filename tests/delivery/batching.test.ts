/**
 * Batched delivery by the worker (CONTRACT section 3, "Several registrations in one call", "Several cases in one
 * call"), against dynalite, fauxqs, the real SAP and Salesforce sandboxes and an EventBridge stand-in: a batch of
 * messages makes one downstream call, each record's outcome inside it is recorded as a single call's would be and
 * its event published by the worker itself, a whole-call failure counts for every record and once for the hold, a
 * lost answer repeats safely, and copies of a message across batches and workers reach the downstream once.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { notOwnFailures } from '../../lib/delivery/deliverBatch.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { createDeliveryWorker } from '../../lib/delivery/worker.ts';
import type { DeliveryOutcome } from '../../lib/downstream/types.ts';
import { createDownstreamHolds, holdStates } from '../../lib/outage/hold.ts';
import { readHold } from '../../lib/outage/holdStore.ts';
import { recordsTable } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { localClientConfig } from '../../local/aws.ts';
import { salesforceDeliveryCalls } from '../../sandbox/salesforceCollections.ts';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { sapDeliveryCalls } from '../../sandbox/sapBatch.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import {
  acceptCases,
  acceptSales,
  DELIVERY,
  deliverAt,
  forgetHolds,
  OUTAGE,
  receive,
  secondsAfter,
} from './support.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let salesforce: SalesforceSandbox;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
let salesQueue: string;
let caseQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
  [sap, salesforce, bus] = await Promise.all([
    startSapSandbox(),
    startSalesforceSandbox(),
    startEventBridgeRecorder(),
  ]);
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    CRM_BASE_URL: salesforce.url,
    CRM_CLIENT_ID: salesforce.clientId,
    CRM_CLIENT_SECRET: salesforce.clientSecret,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
  salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
  caseQueue = aws.resources.queues.CaseQueue.url;
});

afterAll(async () => {
  await Promise.all([sap.stop(), salesforce.stop(), bus.stop()]);
});

beforeEach(async () => {
  await Promise.all([aws.drain(salesQueue), aws.drain(caseQueue), forgetHolds(aws.dynamoEndpoint)]);
  resetDownstreamClients();
});

const T0 = new Date();
/** Sets how many tries a record has already given back for failed calls. */
const setCallFailures = (id: string, callFailures: number) =>
  new DynamoDBClient(localClientConfig(aws.dynamoEndpoint)).send(
    new UpdateItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: id } },
      UpdateExpression: 'SET callFailures = :n',
      ExpressionAttributeValues: { ':n': { N: String(callFailures) } },
    }),
  );
const sapCallsSince = (from: number) => sapDeliveryCalls(sap.requests.slice(from), sap.servicePath);
const salesforceCallsSince = (from: number) => salesforceDeliveryCalls(salesforce.requests.slice(from));
const worker = () => createDeliveryWorker({ holds: createDownstreamHolds(OUTAGE) });
const event = (records: SQSRecord[]) => ({ Records: records });
const idOf = (record: SQSRecord): string => JSON.parse(record.body).id;
/** The record ids whose state-change events the bus took. */
const publishedIds = () =>
  bus.entries.map(
    (entry) => (JSON.parse(entry.Detail ?? '{}') as { recordId?: string; id?: string }).recordId,
  );

describe('batched delivery', () => {
  it('delivers a batch of registrations in one SAP $batch call', async () => {
    // Prepare
    const ids = await acceptSales(12);
    const { records } = await receive(aws.sqs, salesQueue, 12);
    const from = sap.requests.length;
    // Act
    const response = await worker()(event(records), lambdaContext());
    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(sapCallsSince(from)).toEqual([{ kind: 'batch', status: 202, registrations: 12 }]);
    for (const id of ids) expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered', tries: 1 });
  });

  it('delivers a batch larger than one call in calls of ERP_BATCH_SIZE, in order: the first call’s records are delivered before the last call has answered', async () => {
    // Prepare: twelve registrations, calls of five; the third call answers 6 s late (within the client's timeout).
    const ids = await acceptSales(12);
    const { records } = await receive(aws.sqs, salesQueue, 12);
    const firstCall = records.slice(0, 5).map(idOf);
    process.env.ERP_BATCH_SIZE = '5';
    resetDownstreamClients();
    sap.inject({ on: 'batch' }, { on: 'batch' }, { on: 'batch', delayMs: 6000 });
    const from = sap.requests.length;
    // The last call is the one of two registrations (the sandbox also logs token fetches, which may come between).
    const lastCallAnswered = () =>
      sapCallsSince(from).some((call) => call.registrations === 2 && call.status !== 0);
    try {
      // Act: wait until the first call's records are delivered (or the last call has answered).
      const delivering = worker()(event(records), lambdaContext());
      const delivered = async () =>
        (await Promise.all(firstCall.map(async (id) => (await getStatusRecord(id))?.status))).every(
          (status) => status === 'delivered',
        );
      while (!lastCallAnswered() && !(await delivered()))
        await new Promise((resolve) => setTimeout(resolve, 20));
      const answeredBeforeFirstDelivered = lastCallAnswered();
      const response = await delivering;
      // Assess
      expect(answeredBeforeFirstDelivered).toBe(false);
      expect(response.batchItemFailures).toEqual([]);
      expect(sapCallsSince(from).map((call) => call.registrations)).toEqual([5, 5, 2]);
      for (const id of ids)
        expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered', tries: 1 });
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('sends no later call of a batch once one has failed as a whole: those records give their try back, unsent', async () => {
    // Prepare: twelve registrations, calls of five; the first call answers 503.
    const ids = await acceptSales(12);
    const { records } = await receive(aws.sqs, salesQueue, 12);
    process.env.ERP_BATCH_SIZE = '5';
    resetDownstreamClients();
    sap.inject({ on: 'batch', status: 503 });
    const from = sap.requests.length;
    try {
      // Act
      const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
      // Assess: one call; every record waits with its try given back, the unsent ones saying so.
      expect(sapCallsSince(from)).toEqual([{ kind: 'batch', status: 503, registrations: 5 }]);
      expect(results).toEqual(Array(12).fill('DeliveryRetryLater'));
      const stored = await Promise.all(records.map(async (record) => getStatusRecord(idOf(record))));
      for (const record of stored) expect(record).toMatchObject({ status: 'accepted', tries: 0 });
      expect(stored.slice(5).map((record) => record?.error)).toEqual(
        Array(7).fill(expect.stringContaining('not sent: an earlier call of this delivery failed')),
      );
      expect(await readHold('erp')).toMatchObject({ failures: 1 });
      expect(ids).toHaveLength(12);
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('upserts a batch of cases in one Salesforce Collections call', async () => {
    const ids = await acceptCases(15);
    const { records } = await receive(aws.sqs, caseQueue, 15);
    const from = salesforce.requests.length;
    const response = await worker()(event(records), lambdaContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(salesforceCallsSince(from)).toEqual([{ kind: 'collections', status: 200, cases: 15 }]);
    for (const id of ids) {
      expect(salesforce.cases.filter((c) => c.externalId === id)).toHaveLength(1);
      expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered' });
    }
  });

  it('records each outcome inside one call, reports only the transient one, and publishes the rest itself', async () => {
    // Prepare: five cases in one call; the second gets a lock error (transient), the fourth a refusal.
    await acceptCases(5);
    const { records } = await receive(aws.sqs, caseQueue, 5);
    const ids = records.map(idOf);
    salesforce.inject({
      on: 'collections',
      recordErrors: {
        1: [{ errorCode: 'UNABLE_TO_LOCK_ROW', message: 'unable to obtain exclusive access', fields: [] }],
        3: [
          {
            errorCode: 'INVALID_EMAIL_ADDRESS',
            message: 'Email: invalid email address',
            fields: ['SuppliedEmail'],
          },
        ],
      },
    });
    const publishedBefore = bus.entries.length;
    // Act
    const response = await worker()(event(records), lambdaContext());
    // Assess: per message, per record; the events are on the bus now, before any reconciler run.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1].messageId }]);
    expect(await getStatusRecord(ids[1])).toMatchObject({
      status: 'accepted',
      tries: 1,
      error: expect.stringContaining('UNABLE_TO_LOCK_ROW'),
    });
    expect(await getStatusRecord(ids[3])).toMatchObject({
      status: 'rejected',
      error: expect.stringContaining('invalid email address'),
    });
    for (const index of [0, 2, 4])
      expect(await getStatusRecord(ids[index])).toMatchObject({ status: 'delivered' });
    expect(bus.entries.length - publishedBefore).toBe(4);
    expect(publishedIds().slice(publishedBefore).sort()).toEqual([ids[0], ids[2], ids[3], ids[4]].sort());
    for (const index of [0, 2, 3, 4])
      expect((await getStatusRecord(ids[index]))?.pendingEvents ?? []).toEqual([]);
  });

  it('counts a whole-call 503 once for the hold, and against no record: each gives its try back', async () => {
    // Prepare
    const ids = await acceptCases(5);
    const { records } = await receive(aws.sqs, caseQueue, 5);
    salesforce.inject({ on: 'collections', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess
    expect(results).toEqual(Array(5).fill('DeliveryRetryLater'));
    for (const id of ids) {
      expect(await getStatusRecord(id)).toMatchObject({
        status: 'accepted',
        tries: 0,
        callFailures: 1,
        error: expect.stringContaining('503'),
      });
    }
    expect(await readHold('crm')).toMatchObject({ held: false, failures: 1 });
  });

  it('spends the tries once the given-back ones are used up: a record that fails every call it is in still ends', async () => {
    // Prepare: two cases that have already given back DELIVERY_MAX_ATTEMPTS (3) tries for failed calls.
    const ids = await acceptCases(2);
    const { records } = await receive(aws.sqs, caseQueue, 2);
    await Promise.all(ids.map((id) => setCallFailures(id, DELIVERY.maxAttempts)));
    salesforce.inject({ on: 'collections', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess: this whole-call failure is counted against each record.
    expect(results).toEqual(['DeliveryRetryLater', 'DeliveryRetryLater']);
    for (const id of ids)
      expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', tries: 1, callFailures: 3 });
  });

  it('counts a lone record’s failed call as its own: it spends its try', async () => {
    // Prepare
    const [id] = await acceptCases(1);
    const { records } = await receive(aws.sqs, caseQueue, 1);
    salesforce.inject({ on: 'upsert', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess
    expect(results).toEqual(['DeliveryRetryLater']);
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({ status: 'accepted', tries: 1 });
    expect(status?.callFailures).toBeUndefined();
  });

  it('repeats a $batch whose answer was lost without a second registration', async () => {
    // Prepare
    const ids = await acceptSales(4);
    const { records } = await receive(aws.sqs, salesQueue, 4);
    sap.inject({ on: 'batch', dropAnswer: true });
    const holds = createDownstreamHolds(OUTAGE);
    // Act
    const lost = await deliverAt(records, holds, T0);
    const repeated = await deliverAt(records, holds, secondsAfter(T0, 61));
    // Assess
    expect(lost).toEqual(Array(4).fill('DeliveryRetryLater'));
    expect(repeated).toEqual(Array(4).fill('done'));
    for (const id of ids) {
      expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
      // The lost answer failed the whole call: that try was given back.
      expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered', tries: 1, callFailures: 1 });
    }
  });

  it('repeats a Collections call whose answer was lost without a second case', async () => {
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    salesforce.inject({ on: 'collections', dropAnswer: true });
    const holds = createDownstreamHolds(OUTAGE);
    await deliverAt(records, holds, T0);
    const repeated = await deliverAt(records, holds, secondsAfter(T0, 61));
    expect(repeated).toEqual(Array(3).fill('done'));
    for (const id of ids) expect(salesforce.cases.filter((c) => c.externalId === id)).toHaveLength(1);
  });

  it('sends each record once when copies of its message are in two batches of two workers at once', async () => {
    // Prepare: a second copy of every message (the queue's at-least-once delivery).
    const ids = await acceptSales(6);
    const originals = await receive(aws.sqs, salesQueue, 6);
    for (const record of originals.records) {
      await aws.sqs.send(new SendMessageCommand({ QueueUrl: salesQueue, MessageBody: record.body }));
    }
    const copies = await receive(aws.sqs, salesQueue, 6);
    const from = sap.requests.length;
    // Act
    await Promise.allSettled([
      worker()(event(originals.records), lambdaContext()),
      worker()(event(copies.records), lambdaContext()),
    ]);
    // Assess
    const sent = sapCallsSince(from).reduce((sum, call) => sum + call.registrations, 0);
    expect(sent).toBe(6);
    for (const id of ids) {
      expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
      expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered', tries: 1 });
    }
    expect((await holdStates()).erp).toEqual({ held: false });
  });
});

describe('notOwnFailures', () => {
  it('a shared failure, a record never sent and an unreached downstream are not the record’s; its own error is', () => {
    // Prepare
    const wholeCall: DeliveryOutcome = { kind: 'transient', error: 'HTTP 503', reachedDownstream: true };
    const own: DeliveryOutcome = { kind: 'transient', error: 'UNABLE_TO_LOCK_ROW', reachedDownstream: true };
    const notSent: DeliveryOutcome = {
      kind: 'transient',
      error: 'not sent',
      reachedDownstream: false,
      notSent: true,
    };
    const csrf: DeliveryOutcome = {
      kind: 'transient',
      error: 'CSRF token fetch failed',
      reachedDownstream: false,
    };
    const refused: DeliveryOutcome = { kind: 'permanent', error: 'refused', reachedDownstream: true };
    // Act
    const shared = notOwnFailures([wholeCall, wholeCall, own, notSent, refused]);
    const alone = notOwnFailures([wholeCall]);
    const unreached = notOwnFailures([csrf]);
    // Assess
    expect(shared).toEqual([true, true, false, true, false]);
    expect(alone).toEqual([false]);
    expect(unreached).toEqual([true]);
  });
});
