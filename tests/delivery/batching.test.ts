/**
 * Batched delivery by the worker (docs/behaviour.md#batching), against dynalite, fauxqs, the real SAP and
 * Salesforce sandboxes and an EventBridge stand-in: a batch of
 * messages makes one downstream call, each record's outcome inside it is recorded as a single call's would be and
 * its event published by the worker itself, a whole-call failure counts for every record and once for the hold, a
 * lost answer repeats safely, and copies of a message across batches and workers reach the downstream once.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { whoseFailure } from '../../lib/delivery/deliverBatch.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { createDeliveryWorker } from '../../lib/delivery/worker.ts';
import type { DeliveryOutcome } from '../../lib/downstream/types.ts';
import { createDownstreamHolds, type DownstreamHolds, holdStates } from '../../lib/outage/hold.ts';
import { readHold } from '../../lib/outage/holdStore.ts';
import { decodeStoryEntry } from '../../lib/records/story.ts';
import { recordsTable } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { localClientConfig } from '../../local/aws.ts';
import { salesforceDeliveryCalls } from '../../sandbox/salesforceCollections.ts';
import { sapDeliveryCalls } from '../../sandbox/sapBatch.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { lambdaContext } from '../../testkit/factories/apiGateway.ts';
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
  await Promise.all([aws.drain(salesQueue), aws.drain(caseQueue), forgetHolds(aws.dynamoEndpoint)]);
  resetDownstreamClients();
});

const T0 = new Date();
/** A hold that never opens in these tests: what a failed call does to records, without a hold's part in it. */
const NO_HOLD = { ...OUTAGE, afterFailures: 1000 };
/** Sets how many tries a record has already given back for failed calls (the last at `at`, when given). */
const setCallFailures = (id: string, callFailures: number, at?: Date) =>
  new DynamoDBClient(localClientConfig(aws.dynamoEndpoint)).send(
    new UpdateItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: id } },
      UpdateExpression: at ? 'SET callFailures = :n, callFailedAt = :at' : 'SET callFailures = :n',
      ExpressionAttributeValues: {
        ':n': { N: String(callFailures) },
        ...(at ? { ':at': { S: at.toISOString() } } : {}),
      },
    }),
  );
const sapCallsSince = (from: number) => sapDeliveryCalls(sap.requests.slice(from), sap.servicePath);
const salesforceCallsSince = (from: number) => salesforceDeliveryCalls(salesforce.requests.slice(from));
const worker = () => createDeliveryWorker({ holds: createDownstreamHolds(OUTAGE) });
const event = (records: SQSRecord[]) => ({ Records: records });
const idOf = (record: SQSRecord): string => JSON.parse(record.body).id;

/**
 * Delivers `records` as an instance that has just read the hold (not held, cached for a minute), while another
 * instance counts three failures of its own records (the hold opens) just after this batch's first call was counted:
 * the call under way answered before the hold opened, so its answer does not close it.
 */
const deliverWhileAnotherHolds = async (records: SQSRecord[], downstream: 'erp' | 'crm') => {
  const other = createDownstreamHolds(OUTAGE);
  const mine = createDownstreamHolds({ ...OUTAGE, cacheSeconds: 60 });
  let opened = false;
  const openedAfterFirstCall: DownstreamHolds = {
    ...mine,
    async noteOutcomes(counted, outcomes, now) {
      const transitions = await mine.noteOutcomes(counted, outcomes, now);
      if (!opened) {
        opened = true;
        await other.noteOutcomes(
          downstream,
          ['x1', 'x2', 'x3'].map((recordId) => ({ recordId, kind: 'transient' as const })),
          now,
        );
      }
      return transitions;
    },
  };
  await mine.mayDeliver(downstream, T0);
  return deliverAt(records, openedAfterFirstCall, T0);
};
/** The HTTP statuses of a record's delivery attempts, as its story keeps them for the console's timeline. */
const attemptStatuses = async (id: string, downstream: 'erp' | 'crm') => {
  const stored = await getStatusRecord(id);
  return (stored?.story ?? [])
    .map((entry) => decodeStoryEntry(entry, { recordId: id, client: stored?.owner ?? '', downstream }))
    .flatMap((entry) => (entry?.type === 'attempt' ? [entry.status] : []));
};
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
    for (const id of ids) {
      expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered', tries: 1 });
      // The timeline's attempt keeps its change set's status (201 Created), not the $batch's 202.
      expect(await attemptStatuses(id, 'erp')).toEqual([201]);
    }
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

  it('sends no later call of a batch once one has failed as a whole: those messages go back unclaimed, tries untouched', async () => {
    // Prepare: twelve registrations, calls of five; the first call answers 503; a streak too short to hold.
    const ids = await acceptSales(12);
    const { records } = await receive(aws.sqs, salesQueue, 12);
    process.env.ERP_BATCH_SIZE = '5';
    resetDownstreamClients();
    sap.inject({ on: 'batch', status: 503 });
    const from = sap.requests.length;
    try {
      // Act
      const results = await deliverAt(records, createDownstreamHolds(NO_HOLD), T0);
      // Assess: one call; its records give their try back; the later ones were never claimed.
      expect(sapCallsSince(from)).toEqual([{ kind: 'batch', status: 503, registrations: 5 }]);
      expect(results).toEqual(Array(12).fill('DeliveryRetryLaterError'));
      const stored = await Promise.all(records.map(async (record) => getStatusRecord(idOf(record))));
      for (const record of stored.slice(0, 5))
        expect(record).toMatchObject({ status: 'accepted', tries: 0, callFailures: 1 });
      for (const record of stored.slice(5)) {
        expect(record).toMatchObject({ status: 'accepted', attempts: 0 });
        expect(record?.tries ?? 0).toBe(0);
        expect(record?.error).toBeUndefined();
      }
      // A whole call counts once per record it carried.
      expect(await readHold('erp')).toMatchObject({ held: false, failures: 5 });
      expect(ids).toHaveLength(12);
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('makes no further call once its own call opened the hold: the rest go back unclaimed, their tries untouched', async () => {
    // Prepare: 15 registrations, calls of 5, OUTAGE_AFTER_FAILURES 3; SAP answers 202 with every change set 503.
    await acceptSales(15);
    const { records } = await receive(aws.sqs, salesQueue, 15);
    process.env.ERP_BATCH_SIZE = '5';
    resetDownstreamClients();
    const unavailable = { status: 503, message: 'Service unavailable' };
    sap.inject({
      on: 'batch',
      recordErrors: Object.fromEntries([0, 1, 2, 3, 4].map((part) => [part, unavailable])),
    });
    const from = sap.requests.length;
    try {
      // Act
      const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
      // Assess: one $batch reached SAP; the call that opened the hold spent no try, the rest were never claimed.
      expect(sapCallsSince(from)).toEqual([{ kind: 'batch', status: 202, registrations: 5 }]);
      expect(results).toEqual(Array(15).fill('DeliveryHeldError'));
      const stored = await Promise.all(records.map(async (record) => getStatusRecord(idOf(record))));
      for (const record of stored) expect(record?.tries ?? 0).toBe(0);
      for (const record of stored.slice(5)) expect(record?.attempts).toBe(0);
      expect(await readHold('erp')).toMatchObject({ held: true, reason: 'outage' });
    } finally {
      delete process.env.ERP_BATCH_SIZE;
      resetDownstreamClients();
    }
  });

  it('makes no further call once another instance opened the hold while its batch was under way', async () => {
    // Prepare: 10 registrations, calls of 5; another instance opens the hold once the first call is counted.
    await acceptSales(10);
    const { records } = await receive(aws.sqs, salesQueue, 10);
    process.env.ERP_BATCH_SIZE = '5';
    resetDownstreamClients();
    const from = sap.requests.length;
    try {
      // Act: the other instance opens the hold before this batch's second call.
      const results = await deliverWhileAnotherHolds(records, 'erp');
      // Assess: the first call went out and was delivered; the second was never made.
      expect(sapCallsSince(from).map((call) => call.registrations)).toEqual([5]);
      expect(results.slice(0, 5)).toEqual(Array(5).fill('done'));
      expect(results.slice(5)).toEqual(Array(5).fill('DeliveryHeldError'));
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
      // A Collections result has no status of its own: the attempt keeps the call's.
      expect(await attemptStatuses(id, 'crm')).toEqual([200]);
    }
    // The call's Sforce-Limit-Info, kept on the CRM's hold for the console's Downstreams page.
    expect((await readHold('crm')).apiUsage).toEqual({
      ...salesforce.apiUsage.state(),
      at: expect.any(String),
    });
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

  it('counts a whole-call 503 once per record it carried, and against no record: each gives its try back', async () => {
    // Prepare
    const ids = await acceptCases(5);
    const { records } = await receive(aws.sqs, caseQueue, 5);
    salesforce.inject({ on: 'collections', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(NO_HOLD), T0);
    // Assess
    expect(results).toEqual(Array(5).fill('DeliveryRetryLaterError'));
    for (const id of ids) {
      expect(await getStatusRecord(id)).toMatchObject({
        status: 'accepted',
        tries: 0,
        callFailures: 1,
        error: expect.stringContaining('503'),
      });
    }
    expect(await readHold('crm')).toMatchObject({ held: false, failures: 5 });
  });

  it('opens the hold with the failed call that reaches the threshold, and that call spends no try', async () => {
    // Prepare: OUTAGE_AFTER_FAILURES 3; one call of 3 cases fails whole.
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    salesforce.inject({ on: 'collections', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess
    expect(results).toEqual(Array(3).fill('DeliveryHeldError'));
    for (const id of ids) expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', tries: 0 });
    expect(await readHold('crm')).toMatchObject({ held: true, reason: 'outage' });
  });

  it('never opens a hold for a call with any part answered: its locked parts spend their own tries', async () => {
    // Prepare: one Collections call of 8, parts 1-3 upserted and 4-8 UNABLE_TO_LOCK_ROW, then the reverse order.
    const lock = [
      { errorCode: 'UNABLE_TO_LOCK_ROW', message: 'unable to obtain exclusive access', fields: [] },
    ];
    const orders = [
      Object.fromEntries([3, 4, 5, 6, 7].map((part) => [part, lock])),
      Object.fromEntries([0, 1, 2, 3, 4].map((part) => [part, lock])),
    ];
    for (const recordErrors of orders) {
      await forgetHolds(aws.dynamoEndpoint);
      const ids = await acceptCases(8);
      const { records } = await receive(aws.sqs, caseQueue, 8);
      salesforce.inject({ on: 'collections', recordErrors });
      // Act: with the default OUTAGE_AFTER_FAILURES of 5.
      const results = await deliverAt(records, createDownstreamHolds({ ...OUTAGE, afterFailures: 5 }), T0);
      // Assess
      const locked = Object.keys(recordErrors).map(Number);
      expect(results.filter((result) => result === 'DeliveryRetryLaterError')).toHaveLength(5);
      expect(results.filter((result) => result === 'done')).toHaveLength(3);
      for (const index of locked)
        expect(await getStatusRecord(ids[index])).toMatchObject({ status: 'accepted', tries: 1 });
      expect(await readHold('crm')).toMatchObject({ held: false, failures: 0 });
    }
  });

  it('sends a record whose whole-call give-backs are spent in a call of its own: what fails then is its own', async () => {
    // Prepare: two cases that have already given back DELIVERY_MAX_ATTEMPTS (3) tries for failed calls, one fresh.
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    await Promise.all(ids.slice(0, 2).map((id) => setCallFailures(id, DELIVERY.maxAttempts)));
    salesforce.inject({ on: 'upsert', status: 503 }, { on: 'upsert', status: 503 });
    const from = salesforce.requests.length;
    // Act
    const results = await deliverAt(records, createDownstreamHolds(NO_HOLD), T0);
    // Assess: two single upserts (each failing, each counted against its record), then the fresh case alone.
    expect(salesforceCallsSince(from).map((call) => call.kind)).toEqual(['upsert', 'upsert', 'upsert']);
    const byId = Object.fromEntries(records.map((record, index) => [idOf(record), results[index]]));
    for (const id of ids.slice(0, 2)) {
      expect(byId[id]).toBe('DeliveryRetryLaterError');
      expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', tries: 1, callFailures: 3 });
    }
    expect(byId[ids[2]]).toBe('done');
  });

  it('asks the hold again between a record’s call of its own and the next call of its slice: held meanwhile, no further call', async () => {
    // Prepare: two cases whose whole-call give-backs are spent (each goes alone) and a fresh one; another instance
    // opens the CRM hold once the first single call is counted.
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    await Promise.all(ids.slice(0, 2).map((id) => setCallFailures(id, DELIVERY.maxAttempts)));
    const from = salesforce.requests.length;
    // Act
    const results = await deliverWhileAnotherHolds(records, 'crm');
    // Assess: the first call went out and was delivered; nothing more reached the held CRM.
    expect(salesforceCallsSince(from).map((call) => call.kind)).toEqual(['upsert']);
    expect(results.filter((result) => result === 'done')).toHaveLength(1);
    expect(results.filter((result) => result === 'DeliveryHeldError')).toHaveLength(2);
    const held = records.filter((_, index) => results[index] === 'DeliveryHeldError').map(idOf);
    for (const id of held) expect((await getStatusRecord(id))?.tries ?? 0).toBe(0);
  });

  it('makes a probe of the records whose whole-call give-backs are not spent: one that failed every call it was in never keeps the hold shut', async () => {
    // Prepare: the CRM held, its probe due; first in line a case whose give-backs are spent (it goes alone) and that
    // Salesforce refuses whenever it is alone, then two fresh cases. A flapping downstream and a poison record make
    // this (tests/property/failureRate.property.test.ts): probe after probe the poison went first, failed, and
    // everyone stayed held.
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    await setCallFailures(ids[0], DELIVERY.maxAttempts);
    const holds = createDownstreamHolds(OUTAGE);
    await holds.noteOutcomes(
      'crm',
      ['x1', 'x2', 'x3'].map((recordId) => ({ recordId, kind: 'transient' as const })),
      secondsAfter(T0, -OUTAGE.probeSeconds),
    );
    salesforce.inject({ on: 'upsert', status: 503 });
    const from = salesforce.requests.length;
    const inLine = [ids[0], ids[1], ids[2]].map(
      (id) => records.find((record) => idOf(record) === id) as SQSRecord,
    );
    // Act
    const results = await deliverAt(inLine, holds, T0);
    // Assess: the probe carried the two fresh cases and closed the hold; then the spent case went alone, its own.
    expect(salesforceCallsSince(from).map((call) => call.kind)).toEqual(['collections', 'upsert']);
    expect(results).toEqual(['DeliveryRetryLaterError', 'done', 'done']);
    expect(await readHold('crm')).toMatchObject({ held: false });
    expect(await getStatusRecord(ids[0])).toMatchObject({ status: 'accepted', tries: 1 });
  });

  it('restarts a record’s whole-call give-backs after its downstream’s hold closed', async () => {
    // Prepare: two cases that gave back DELIVERY_MAX_ATTEMPTS tries for failed calls before a hold that has closed.
    const ids = await acceptCases(2);
    const { records } = await receive(aws.sqs, caseQueue, 2);
    await Promise.all(ids.map((id) => setCallFailures(id, DELIVERY.maxAttempts, secondsAfter(T0, -120))));
    const holds = createDownstreamHolds(OUTAGE);
    await holds.noteOutcomes(
      'crm',
      ['x1', 'x2', 'x3'].map((recordId) => ({ recordId, kind: 'transient' as const })),
      secondsAfter(T0, -100),
    );
    await holds.noteOutcome('crm', { recordId: 'x1', kind: 'delivered', probe: true }, secondsAfter(T0, -60));
    salesforce.inject({ on: 'collections', status: 503 });
    const from = salesforce.requests.length;
    // Act
    const results = await deliverAt(records, createDownstreamHolds(NO_HOLD), T0);
    // Assess: one call for both, as for any record; the count starts again from one.
    expect(salesforceCallsSince(from).map((call) => call.kind)).toEqual(['collections']);
    expect(results).toEqual(['DeliveryRetryLaterError', 'DeliveryRetryLaterError']);
    for (const id of ids)
      expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', tries: 0, callFailures: 1 });
  });

  it('counts a lone record’s failed call as its own: it spends its try', async () => {
    // Prepare
    const [id] = await acceptCases(1);
    const { records } = await receive(aws.sqs, caseQueue, 1);
    salesforce.inject({ on: 'upsert', status: 503 });
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), T0);
    // Assess
    expect(results).toEqual(['DeliveryRetryLaterError']);
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({ status: 'accepted', tries: 1 });
    expect(status?.callFailures).toBeUndefined();
  });

  it('repeats a $batch whose answer was lost without a second registration, and keeps SAP’s document number', async () => {
    // Prepare
    const ids = await acceptSales(4);
    const { records } = await receive(aws.sqs, salesQueue, 4);
    sap.inject({ on: 'batch', dropAnswer: true });
    const holds = createDownstreamHolds(NO_HOLD);
    // Act
    const lost = await deliverAt(records, holds, T0);
    const repeated = await deliverAt(records, holds, secondsAfter(T0, 61));
    // Assess
    expect(lost).toEqual(Array(4).fill('DeliveryRetryLaterError'));
    expect(repeated).toEqual(Array(4).fill('done'));
    for (const id of ids) {
      const stored = sap.registrations.filter((r) => r.RegistrationId === id);
      expect(stored).toHaveLength(1);
      // The lost answer failed the whole call: that try was given back. The repeat met 409 naming the document.
      expect(await getStatusRecord(id)).toMatchObject({
        status: 'delivered',
        tries: 1,
        callFailures: 1,
        downstreamId: stored[0].DocumentNumber,
      });
      // The lost answer's attempt has no status; the repeat's is the 409 that named the document.
      expect(await attemptStatuses(id, 'erp')).toEqual([null, 409]);
    }
  });

  it('repeats a Collections call whose answer was lost without a second case', async () => {
    const ids = await acceptCases(3);
    const { records } = await receive(aws.sqs, caseQueue, 3);
    salesforce.inject({ on: 'collections', dropAnswer: true });
    const holds = createDownstreamHolds(NO_HOLD);
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

describe('whoseFailure', () => {
  it('a failure the adapter marks whole-call is not the record’s when others shared the call; nor an unreached one; a lone call’s is judged alone', () => {
    // Prepare
    const wholeCall: DeliveryOutcome = {
      kind: 'transient',
      error: 'HTTP 503',
      reachedDownstream: true,
      wholeCall: true,
    };
    const own: DeliveryOutcome = { kind: 'transient', error: 'UNABLE_TO_LOCK_ROW', reachedDownstream: true };
    // The same error text as a whole-call failure, unmarked: a part's own answer, never decided by likeness.
    const ownAlike: DeliveryOutcome = { kind: 'transient', error: 'HTTP 503', reachedDownstream: true };
    const csrf: DeliveryOutcome = {
      kind: 'transient',
      error: 'CSRF token fetch failed',
      reachedDownstream: false,
    };
    const refused: DeliveryOutcome = { kind: 'permanent', error: 'refused', reachedDownstream: true };
    // Act
    const shared = [wholeCall, own, ownAlike, csrf, refused].map((outcome) => whoseFailure(outcome, 5));
    const alone = [wholeCall, own, refused].map((outcome) => whoseFailure(outcome, 1));
    const unreachedAlone = whoseFailure(csrf, 1);
    // Assess
    expect(shared).toEqual(['call', 'own', 'own', 'call', 'own']);
    expect(alone).toEqual(['alone', 'alone', 'own']);
    expect(unreachedAlone).toBe('call');
  });
});
