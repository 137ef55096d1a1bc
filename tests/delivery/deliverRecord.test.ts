/**
 * One message through deliverRecord, as the worker gets it from the SQS event source, against fauxqs, dynalite
 * and the SAP sandbox, with the clock given: what it writes on the status record, the visibility it gives the
 * message (the wait before SQS hands it out again), what it throws (the batch reports the message failed), what
 * it logs and counts. Records are accepted through the sales handler, so they are stored and queued as intake does.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { dynamoClient } from '../../lib/aws/clients.ts';
import { UpdateItemCommand } from '../../lib/aws/jsonProtocol/dynamodb.ts';
import { deliverMessages } from '../../lib/delivery/deliverBatch.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { parseQueuedRecord } from '../../lib/delivery/message.ts';
import { deliveryWorker } from '../../lib/delivery/worker.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { messageBody } from '../../lib/queue/sendRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import type { DeliverySettings } from '../../lib/settings/settings.ts';
import { recordsTable } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { QueuedRecord, SalesRegistration } from '../../lib/types.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { outputDuring } from '../../testkit/emittedOutput.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { forgetHolds } from './support.ts';

vi.hoisted(() => {
  // The test run turns metrics off (vitest.config.ts); these tests read the ones the worker publishes.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let salesQueue: string;
let salesDeadLetterQueue: string;
/** The service's SQS and DynamoDB calls pass these proxies: they record them and run a test's race at a chosen call. */
let sqsProxy: Awaited<ReturnType<typeof startHookedProxy>>;
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

/** The visibility timeouts the worker gave messages (ChangeMessageVisibility, as sent to SQS). */
const visibilityChanges = () =>
  sqsProxy.requests
    .filter((call) => call.operation === 'ChangeMessageVisibility')
    .map(({ body }) => ({
      queueUrl: body.QueueUrl,
      receiptHandle: body.ReceiptHandle,
      seconds: body.VisibilityTimeout,
    }));

const settings: DeliverySettings = { maxAttempts: 3, retryBaseSeconds: 10, leaseSeconds: 90 };
const RECONCILE_AFTER_SECONDS = 300;

beforeAll(async () => {
  // These tests fail single records on purpose, one after another: no hold (tests/delivery/hold.test.ts) may
  // open between them, so the threshold is out of reach here.
  process.env.OUTAGE_AFTER_FAILURES = '1000';
  aws = await isolatedAws();
  [sap, sqsProxy, dynamo] = await Promise.all([
    startSapSandbox(),
    startHookedProxy(aws.sqsEndpoint),
    startHookedProxy(aws.dynamoEndpoint),
  ]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SQS: sqsProxy.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  delete process.env.RECONCILE_AFTER_SECONDS;
  resetDownstreamClients();
  salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
  salesDeadLetterQueue = aws.resources.queues.SalesRegistrationDeadLetterQueue.url;
});

afterAll(async () => {
  await Promise.all([sap.stop(), sqsProxy.stop(), dynamo.stop()]);
});

beforeEach(async () => {
  await Promise.all([aws.drain(salesQueue), aws.drain(salesDeadLetterQueue)]);
  sqsProxy.reset();
  dynamo.reset();
});

afterEach(() => {
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  delete process.env.ERP_PASSWORD_PARAMETER;
  resetDownstreamClients();
});

/** Marks `tries` claims as already spent on a record (its earlier tries), as the claims would have. */
const spendTries = async (id: string, tries: number, callFailures = 0) => {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: id } },
      UpdateExpression: 'SET tries = :tries, callFailures = :callFailures',
      ExpressionAttributeValues: {
        ':tries': { N: String(tries) },
        ':callFailures': { N: String(callFailures) },
      },
    }),
  );
};

/**
 * A sale accepted through the handler, its status record, and its message as the event source hands it over, for
 * the record's try number `attempt` (the tries before it are spent on the record). SQS's receive count is left at 1
 * whatever the try: the worker must not read it.
 */
const acceptedSale = async (attempt = 1) => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame('DLV') })]),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  const out = await aws.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: salesQueue, MaxNumberOfMessages: 1, VisibilityTimeout: 60 }),
  );
  const [message] = out.Messages ?? [];
  const queued = JSON.parse(message.Body ?? '{}') as QueuedRecord;
  if (attempt > 1) await spendTries(queued.id, attempt - 1);
  const status = (await getStatusRecord(queued.id)) as StatusRecord;
  const sqsRecord = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ApproximateReceiveCount: '1' },
  } as unknown as SQSRecord;
  return { id: queued.id, status, sqsRecord, acceptedAt: new Date(status.acceptedAt) };
};

/** A message as the event source hands over one that intake never wrote. */
const foreignMessage = (body: string) =>
  ({
    messageId: 'm',
    receiptHandle: 'r',
    body,
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

/** Delivers one message at `now` and publishes the tally, as the worker does at the end of its batch. */
const deliverAt = (sqsRecord: SQSRecord, now: Date) =>
  outputDuring(async () => {
    const tally = new OutcomeTally();
    try {
      await deliverRecord(sqsRecord, { settings, log: logger, tally, now: () => now });
    } finally {
      tally.publish();
    }
  });

const secondsAfter = (from: Date, seconds: number) => new Date(from.getTime() + seconds * 1000).toISOString();
const postsFor = (id: string) =>
  sap.requests.filter((r) => r.method === 'POST' && r.body.includes(`"RegistrationId":"${id}"`)).length;

describe('messages that are no queued record', () => {
  it.each([
    ['not JSON', '{"id":'],
    ['JSON null', 'null'],
    ['an id that is no string', JSON.stringify({ id: 7, kind: 'salesRegistration', record: {} })],
    ['a kind that is no string', JSON.stringify({ id: 'a'.repeat(32), kind: 1, record: {} })],
    ['no id', JSON.stringify({ kind: 'salesRegistration', requestId: 'r' })],
    ['an empty id', JSON.stringify({ id: '', kind: 'salesRegistration', requestId: 'r' })],
    ['a kind the service has not', JSON.stringify({ id: 'a'.repeat(32), kind: 'invoice', requestId: 'r' })],
  ])('refuses %s: MalformedMessageError, nothing claimed, nothing sent', async (_, body) => {
    const requestsBefore = sap.requests.length;
    const { outcome } = await deliverAt(foreignMessage(body), new Date());
    expect(outcome).toMatchObject({
      name: 'MalformedMessageError',
      message: 'message body is not a queued record',
    });
    expect(sap.requests.length).toBe(requestsBefore);
    expect(visibilityChanges()).toEqual([]);
  });

  it('reads a message intake wrote as it was written', () => {
    const message: QueuedRecord = { id: 'b'.repeat(32), kind: 'caseRecord', requestId: 'req-1' };
    expect(parseQueuedRecord(messageBody(message))).toEqual(message);
  });

  it('reads an older message that carries the record too, and drops the content', () => {
    const body = JSON.stringify({
      id: 'b'.repeat(32),
      kind: 'caseRecord',
      requestId: 'req-1',
      record: { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' },
    });
    expect(parseQueuedRecord(body)).toEqual({ id: 'b'.repeat(32), kind: 'caseRecord', requestId: 'req-1' });
  });
});

describe('copies that find no work', () => {
  it('drops a message with no status record, logging it as an error, without calling SAP', async () => {
    // Prepare: a well-formed message whose record was never stored.
    const { sqsRecord } = await acceptedSale();
    const id = 'c'.repeat(32);
    const parsed = JSON.parse(sqsRecord.body) as QueuedRecord;
    const orphan = { ...sqsRecord, body: JSON.stringify({ ...parsed, id, requestId: 'req-orphan' }) };
    // Act
    const { outcome, logs } = await deliverAt(orphan, new Date());
    // Assess
    expect(outcome).toBeUndefined();
    expect(postsFor(id)).toBe(0);
    expect(visibilityChanges()).toEqual([]);
    expect(await getStatusRecord(id)).toBeUndefined();
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'no status record: message dropped',
        recordId: id,
        correlationId: 'req-orphan',
        downstream: 'erp',
      }),
    );
  });

  it('drops a copy of a settled record, logging its status, without calling SAP', async () => {
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    const first = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    const second = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 2000));
    expect(first.outcome).toBeUndefined();
    expect(second.outcome).toBeUndefined();
    expect(postsFor(id)).toBe(1);
    expect(second.logs).toContainEqual(
      expect.objectContaining({
        level: 'INFO',
        message: 'record already settled: message dropped',
        recordId: id,
        status: 'delivered',
      }),
    );
    expect(second.metrics).toEqual([]);
  });
});

describe('a copy meeting another worker’s lease', () => {
  it('waits (visibility) until that lease runs out, rounded up to whole seconds, and leaves the record alone', async () => {
    // Prepare: another worker claimed the record at `now` with a lease of 42.3 s.
    const { id, sqsRecord, acceptedAt } = await acceptedSale(2);
    const now = new Date(acceptedAt.getTime() + 5000);
    const rivalLease = secondsAfter(now, 42.3);
    await claimRecord(id, { now, leaseUntil: rivalLease });
    // Act
    const { outcome, logs } = await deliverAt(sqsRecord, now);
    // Assess
    expect(outcome).toMatchObject({
      name: 'DeliveryRetryLaterError',
      message: 'attempt 2 failed transiently; next in 43 s',
    });
    expect(visibilityChanges()).toEqual([
      { queueUrl: salesQueue, receiptHandle: sqsRecord.receiptHandle, seconds: 43 },
    ]);
    expect(postsFor(id)).toBe(0);
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      leaseUntil: rivalLease,
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'record being delivered by another worker: message waits',
        delaySeconds: 43,
      }),
    );
  });

  it('waits at least a second for a lease about to run out', async () => {
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    const now = new Date(acceptedAt.getTime() + 5000);
    await claimRecord(id, { now, leaseUntil: secondsAfter(now, 0.001) });
    const { outcome } = await deliverAt(sqsRecord, now);
    expect(outcome).toMatchObject({ message: 'attempt 1 failed transiently; next in 1 s' });
    expect(visibilityChanges().map((change) => change.seconds)).toEqual([1]);
  });

  it('waits a whole lease of its own when the other worker let go between the claim and the read', async () => {
    // Prepare: the claim meets the rival's lease; before the worker reads the record, the rival records a
    // transient failure (which removes its lease).
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    const now = new Date(acceptedAt.getTime() + 5000);
    const rivalLease = secondsAfter(now, 30);
    const rival = await claimRecord(id, { now, leaseUntil: rivalLease });
    if (!rival.claimed) throw new Error('not claimed');
    const rivalClaim = rival.claimed;
    // The worker's first GetItem is its fresh read of the hold before the call; the second, the claim's read.
    dynamo.before(
      'GetItem',
      async () => {
        await recordAttempt(
          rivalClaim,
          { status: 'accepted', attempts: 1, error: 'HTTP 503', at: now, dueAt: secondsAfter(now, 330) },
          rivalLease,
        );
      },
      1,
    );
    // Act
    const { outcome } = await deliverAt(sqsRecord, now);
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(outcome).toMatchObject({ message: 'attempt 1 failed transiently; next in 90 s' });
    expect(visibilityChanges().map((change) => change.seconds)).toEqual([settings.leaseSeconds]);
  });
});

describe('what reaches the downstream', () => {
  it('is the stored record, never content a message body carries for a real stored id', async () => {
    // Prepare: a message naming a real record, its body carrying other content (as anyone able to send to the
    // queue could write it, in the older format that carried the record).
    const { id, status, sqsRecord, acceptedAt } = await acceptedSale();
    const stored = status.record as SalesRegistration;
    const forged = {
      ...JSON.parse(sqsRecord.body),
      record: { ...stored, Name: 'Mallory', email: 'mallory@example.com', FrameNum: 'FORGED0000001' },
    };
    // Act
    const { outcome } = await deliverAt(
      { ...sqsRecord, body: JSON.stringify(forged) },
      new Date(acceptedAt.getTime() + 1000),
    );
    // Assess
    expect(outcome).toBeUndefined();
    const received = sap.registrations.filter((r) => r.RegistrationId === id);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ FrameNum: stored.FrameNum });
    const posted = sap.requests.filter((r) => r.method === 'POST' && r.body.includes(id)).map((r) => r.body);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toContain(stored.Name);
    expect(posted[0]).not.toMatch(/Mallory|FORGED/);
  });
});

describe('outcomes', () => {
  it('records a delivery, releases the lease, leaves the open index, and counts it with its latency', async () => {
    // Prepare
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    const now = new Date(acceptedAt.getTime() + 1234);
    // Act
    const { outcome, metrics, logs } = await deliverAt(sqsRecord, now);
    // Assess
    expect(outcome).toBeUndefined();
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'INFO',
        message: 'delivered',
        recordId: id,
        downstream: 'erp',
        attempt: 1,
      }),
    );
    expect(logs.filter((line) => line.level === 'ERROR')).toEqual([]);
    const stored = sap.registrations.find((r) => r.RegistrationId === id);
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({
      status: 'delivered',
      attempts: 1,
      downstreamId: stored?.DocumentNumber,
      updatedAt: now.toISOString(),
    });
    expect(status).not.toHaveProperty('leaseUntil');
    expect(status).not.toHaveProperty('dueAt');
    expect(status).not.toHaveProperty('openKind');
    expect(visibilityChanges()).toEqual([]);
    expect(metrics).toEqual([
      expect.objectContaining({ downstream: 'erp', delivered: 1, deliveryLatency: 1234 }),
    ]);
  });

  it('records a refusal as rejected with the downstream message, and counts it', async () => {
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    sap.inject({ status: 400, message: 'Dealer 1234 is blocked for registrations' });
    const { outcome, metrics, logs } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    expect(outcome).toBeUndefined();
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'rejected',
      attempts: 1,
      error: 'Dealer 1234 is blocked for registrations',
    });
    expect(visibilityChanges()).toEqual([]);
    expect(metrics).toEqual([expect.objectContaining({ downstream: 'erp', rejected: 1 })]);
    expect(metrics[0]).not.toHaveProperty('deliveryLatency');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'WARN', message: 'rejected by downstream', recordId: id, attempt: 1 }),
    );
  });

  it('after a transient failure: accepted with the error, due after the backoff, the message hidden for the backoff', async () => {
    // Prepare: the second attempt (the backoff after attempt 2 is 20 to 24 s with a base of 10 s).
    const { id, sqsRecord, acceptedAt } = await acceptedSale(2);
    const now = new Date(acceptedAt.getTime() + 60_000);
    sap.inject({ status: 503 });
    // Act
    const { outcome, metrics, logs } = await deliverAt(sqsRecord, now);
    // Assess
    const [change] = visibilityChanges();
    const delay = change?.seconds as number;
    expect(delay).toBeGreaterThanOrEqual(20);
    expect(delay).toBeLessThanOrEqual(24);
    expect(visibilityChanges()).toEqual([
      { queueUrl: salesQueue, receiptHandle: sqsRecord.receiptHandle, seconds: delay },
    ]);
    expect(outcome).toMatchObject({
      name: 'DeliveryRetryLaterError',
      message: `attempt 2 failed transiently; next in ${delay} s`,
    });
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({
      status: 'accepted',
      attempts: 1,
      error: 'HTTP 503: Service Unavailable',
      openKind: 'salesRegistration',
      dueAt: secondsAfter(now, delay + RECONCILE_AFTER_SECONDS),
      updatedAt: now.toISOString(),
    });
    expect(status).not.toHaveProperty('leaseUntil');
    expect(metrics).toEqual([expect.objectContaining({ downstream: 'erp', retried: 1 })]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'transient failure: retry later',
        recordId: id,
        attempt: 2,
        delaySeconds: delay,
      }),
    );
  });

  it('after the last try fails: failed, the message on the dead-letter queue, done (the batch deletes it)', async () => {
    // Prepare: the record's third try is its last (maxAttempts 3), though SQS has handed the message out once.
    const { id, sqsRecord, acceptedAt } = await acceptedSale(3);
    sap.inject({ status: 503 });
    // Act
    const { outcome, metrics, logs } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    // Assess
    expect(outcome).toBeUndefined();
    expect(visibilityChanges()).toEqual([]);
    expect((await aws.drain(salesDeadLetterQueue)).map((m) => m.id)).toEqual([id]);
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({
      status: 'failed',
      attempts: 1,
      tries: 3,
      error: 'HTTP 503: Service Unavailable',
    });
    expect(status).not.toHaveProperty('openKind');
    expect(status).not.toHaveProperty('dueAt');
    expect(metrics).toEqual([expect.objectContaining({ downstream: 'erp', failed: 1 })]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'attempts exhausted: to the dead-letter queue',
        attempt: 3,
      }),
    );
  });

  it('treats a try beyond the last as the last', async () => {
    const { id, sqsRecord, acceptedAt } = await acceptedSale(4);
    sap.inject({ status: 503 });
    const { outcome } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    expect(outcome).toBeUndefined();
    expect(await getStatusRecord(id)).toMatchObject({ status: 'failed' });
    expect((await aws.drain(salesDeadLetterQueue)).map((m) => m.id)).toEqual([id]);
  });

  it('does not fail a record on a high receive count: SQS’s count is not the record’s tries', async () => {
    // Prepare: the record's first try, on a message SQS has handed out 40 times (bounced copies).
    const { id, sqsRecord, acceptedAt } = await acceptedSale(1);
    const bounced = { ...sqsRecord, attributes: { ...sqsRecord.attributes, ApproximateReceiveCount: '40' } };
    sap.inject({ status: 503 });
    // Act
    const { outcome } = await deliverAt(bounced, new Date(acceptedAt.getTime() + 1000));
    // Assess
    expect(outcome).toMatchObject({
      name: 'DeliveryRetryLaterError',
      message: expect.stringMatching(/^attempt 1 /),
    });
    expect(await getStatusRecord(id)).toMatchObject({ status: 'accepted', tries: 1, attempts: 1 });
    expect(await aws.drain(salesDeadLetterQueue)).toEqual([]);
  });

  it('sends a copy that finds its record failed to the dead-letter queue (the failing worker could not)', async () => {
    // Prepare: the record failed on its last try; the dead-letter queue is emptied as if that send was lost.
    const { id, sqsRecord, acceptedAt } = await acceptedSale(3);
    sap.inject({ status: 503 });
    await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    await aws.drain(salesDeadLetterQueue);
    const requestsBefore = sap.requests.length;
    // Act
    const { outcome, logs } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 2000));
    // Assess
    expect(outcome).toBeUndefined();
    expect(sap.requests.length).toBe(requestsBefore);
    expect((await aws.drain(salesDeadLetterQueue)).map((m) => m.id)).toEqual([id]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'INFO',
        message: 'record failed: message to the dead-letter queue',
        recordId: id,
        downstream: 'erp',
      }),
    );
  });

  it('logs, and records nothing, when its lease ran out and another worker claimed the record meanwhile', async () => {
    // Prepare: the worker claims at `now`; just before it records the outcome, another worker claims the
    // record after the first lease ran out.
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    const now = new Date(acceptedAt.getTime() + 1000);
    const later = new Date(now.getTime() + (settings.leaseSeconds + 1) * 1000);
    const rivalLease = secondsAfter(later, 90);
    dynamo.before(
      'UpdateItem',
      async () => {
        const claim = await claimRecord(id, {
          now: later,
          leaseUntil: rivalLease,
        });
        expect(claim.claimed).toBeDefined();
      },
      1,
    );
    // Act
    const { outcome, logs } = await deliverAt(sqsRecord, now);
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(outcome).toBeUndefined();
    expect(postsFor(id)).toBe(1);
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      leaseUntil: rivalLease,
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'lease lost before the outcome was recorded',
        recordId: id,
        attempt: 1,
      }),
    );
  });
});

describe('a downstream that cannot even be tried', () => {
  it('with a setting missing: transient, the attempt not counted, the missing setting named', async () => {
    // Prepare
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    delete process.env.ERP_BASE_URL;
    resetDownstreamClients();
    const now = new Date(acceptedAt.getTime() + 1000);
    // Act
    const { outcome } = await deliverAt(sqsRecord, now);
    // Assess
    expect(outcome).toMatchObject({ name: 'DeliveryRetryLaterError' });
    expect(postsFor(id)).toBe(0);
    const [{ seconds }] = visibilityChanges();
    expect(seconds).toBeGreaterThanOrEqual(10);
    expect(seconds).toBeLessThanOrEqual(12);
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      error: 'not attempted: setting ERP_BASE_URL is not set',
      dueAt: secondsAfter(now, (seconds as number) + RECONCILE_AFTER_SECONDS),
    });
  });

  it('with its secret unreadable: transient, the attempt not counted', async () => {
    // Prepare: the password comes from a Parameter Store that does not answer.
    const { id, sqsRecord, acceptedAt } = await acceptedSale();
    delete process.env.ERP_PASSWORD;
    Object.assign(process.env, {
      ERP_PASSWORD_PARAMETER: '/dealer-gateway/test/erp/password',
      AWS_ENDPOINT_URL_SSM: 'http://127.0.0.1:9',
    });
    resetDownstreamClients();
    // Act
    const { outcome } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    // Assess
    expect(outcome).toMatchObject({ name: 'DeliveryRetryLaterError' });
    expect(postsFor(id)).toBe(0);
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      error: expect.stringMatching(/^not attempted: ./),
    });
  });

  it('gives the try back: a downstream that cannot be tried is no fault of the record', async () => {
    // Prepare: the record's last try.
    const { id, sqsRecord, acceptedAt } = await acceptedSale(3);
    delete process.env.ERP_USERNAME;
    resetDownstreamClients();
    // Act
    const { outcome } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    // Assess
    expect(outcome).toMatchObject({ name: 'DeliveryRetryLaterError' });
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      tries: 2,
      callFailures: 1,
    });
  });

  it('on the last attempt with the given-back tries spent too: failed, with no attempt counted', async () => {
    const { id, sqsRecord, acceptedAt } = await acceptedSale(3);
    await spendTries(id, 2, 3);
    delete process.env.ERP_USERNAME;
    resetDownstreamClients();
    const { outcome } = await deliverAt(sqsRecord, new Date(acceptedAt.getTime() + 1000));
    expect(outcome).toBeUndefined();
    expect(await getStatusRecord(id)).toMatchObject({
      status: 'failed',
      attempts: 0,
      tries: 3,
      error: 'not attempted: setting ERP_USERNAME is not set',
    });
  });
});

describe('the worker over a batch', () => {
  it('reports only the failed messages and publishes the batch’s outcomes once, at the end', async () => {
    // Prepare: a sale to deliver and a message that is no queued record.
    const { id, sqsRecord } = await acceptedSale();
    const malformed = { ...foreignMessage('not a record'), messageId: 'malformed-1' };
    // Act
    const { outcome, metrics } = await outputDuring(() =>
      deliveryWorker({ Records: [sqsRecord, malformed] }, lambdaContext()),
    );
    // Assess
    expect(outcome).toEqual({ batchItemFailures: [{ itemIdentifier: 'malformed-1' }] });
    expect(await getStatusRecord(id)).toMatchObject({ status: 'delivered' });
    expect(metrics).toEqual([expect.objectContaining({ downstream: 'erp', delivered: 1 })]);
  });

  it('publishes the outcomes even when every message failed and the batch throws', async () => {
    const { sqsRecord } = await acceptedSale();
    sap.inject({ status: 503 });
    const { outcome, metrics } = await outputDuring(() =>
      deliveryWorker({ Records: [sqsRecord] }, lambdaContext()),
    );
    expect(outcome).toMatchObject({ name: 'FullBatchFailureError' });
    expect(metrics).toEqual([expect.objectContaining({ downstream: 'erp', retried: 1 })]);
  });
});

describe('a held downstream', () => {
  it('hides each message until the next probe, unclaimed, and logs one line naming how many wait', async () => {
    // Prepare: SAP's hold opened at `opened` by failures of two records (its own worker instance, threshold 2).
    const { id, sqsRecord } = await acceptedSale();
    const outage = {
      afterFailures: 2,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 0,
    };
    const holds = createDownstreamHolds(outage);
    const opened = new Date();
    const failures = ['a', 'b'].map((recordId) => ({ recordId, kind: 'transient' as const }));
    await holds.noteOutcomes('erp', failures, opened);
    sqsProxy.reset();
    try {
      // Act: 10 s into the hold, before its first probe.
      const { outcome, logs } = await outputDuring(() =>
        deliverMessages([sqsRecord], {
          settings,
          log: logger,
          tally: new OutcomeTally(),
          now: () => new Date(opened.getTime() + 10_000),
          holds,
          outage,
        }),
      );
      // Assess: hidden 30 s (the probe period), no try spent, nothing sent.
      expect(outcome).toEqual([{ ok: false, error: expect.objectContaining({ name: 'DeliveryHeldError' }) }]);
      expect(visibilityChanges()).toEqual([
        { queueUrl: salesQueue, receiptHandle: sqsRecord.receiptHandle, seconds: 30 },
      ]);
      const status = await getStatusRecord(id);
      expect(status).toMatchObject({ status: 'accepted' });
      expect(status).not.toHaveProperty('tries');
      expect(status).not.toHaveProperty('leaseUntil');
      expect(postsFor(id)).toBe(0);
      expect(logs.filter((line) => line.message === 'downstream held: messages wait unclaimed')).toEqual([
        expect.objectContaining({
          downstream: 'erp',
          reason: 'outage',
          heldSince: opened.toISOString(),
          messages: 1,
          delaySeconds: 30,
        }),
      ]);
    } finally {
      await forgetHolds(aws.dynamoEndpoint);
    }
  });
});
