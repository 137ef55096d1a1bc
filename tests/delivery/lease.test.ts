/**
 * Two copies of one message never reach the downstream together: the worker claims a record (a lease) before the
 * call. SQS delivers at least once, and a send retried after a lost answer puts a second copy on the queue.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as deliveryWorker } from '../../functions/deliveryWorker.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { messageBody } from '../../lib/queue/sendRecords.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { QueuedRecord } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { pollOnce } from '../../local/queuePoller.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let sqs: SQSClient;
let salesQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
  sap = await startSapSandbox();
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  resetDownstreamClients();
  sqs = new SQSClient({ ...localClientConfig(aws.sqsEndpoint), useQueueUrlAsEndpoint: false });
  salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
});

afterAll(async () => {
  await sap.stop();
  sqs.destroy();
});

beforeEach(async () => {
  await aws.drain(salesQueue);
});

/** Accepts one sale through the handler and returns its queued message (taken off the queue). */
const acceptedSale = async (): Promise<QueuedRecord> => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame('LEASE') })]),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  const [message] = await aws.drain(salesQueue);
  return message;
};

const enqueue = (message: QueuedRecord, copies: number) =>
  Promise.all(
    Array.from({ length: copies }, () =>
      sqs.send(new SendMessageCommand({ QueueUrl: salesQueue, MessageBody: messageBody(message) })),
    ),
  );

const postsFor = (id: string) =>
  sap.requests.filter((r) => r.method === 'POST' && r.body.includes(`"RegistrationId":"${id}"`)).length;

const poll = () =>
  pollOnce({ sqs, queueUrl: salesQueue, handler: deliveryWorker, batchSize: 10, visibilityTimeout: 30 });

describe('copies of one message', () => {
  it('in one batch: SAP gets one request, the copy waits, then is dropped once the record is settled', async () => {
    // Prepare: SAP answers slowly, so both copies are in flight together.
    const message = await acceptedSale();
    await enqueue(message, 2);
    sap.inject({ delayMs: 300 });
    // Act
    const first = await poll();
    const during = await getStatusRecord(message.id);
    await new Promise((resolve) =>
      setTimeout(resolve, Number(process.env.DELIVERY_LEASE_SECONDS) * 1000 + 300),
    );
    const later = await poll();
    // Assess
    expect(first).toMatchObject({ received: 2, deleted: 1, failed: 1 });
    expect(during).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(later).toMatchObject({ received: 1, deleted: 1, failed: 0 });
    expect(postsFor(message.id)).toBe(1);
  });

  it('in two workers at once: SAP gets one request', async () => {
    const message = await acceptedSale();
    await enqueue(message, 2);
    sap.inject({ delayMs: 300 });
    const pollOne = () =>
      pollOnce({ sqs, queueUrl: salesQueue, handler: deliveryWorker, batchSize: 1, visibilityTimeout: 30 });
    await Promise.all([pollOne(), pollOne()]);
    expect(postsFor(message.id)).toBe(1);
    expect(await getStatusRecord(message.id)).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('of a record with no status record: dropped without a downstream call', async () => {
    const message = { ...(await acceptedSale()), id: 'f'.repeat(32) };
    await enqueue(message, 1);
    const result = await poll();
    expect(result).toMatchObject({ received: 1, deleted: 1, failed: 0 });
    expect(postsFor(message.id)).toBe(0);
    expect(await getStatusRecord(message.id)).toBeUndefined();
  });
});

describe("the ERP's refusals", () => {
  it('counts a 409 naming our own RegistrationId as delivered', async () => {
    const message = await acceptedSale();
    await enqueue(message, 1);
    sap.inject({
      status: 409,
      message: `RegistrationId ${message.id} already registered as document 49000001`,
    });
    await poll();
    expect(await getStatusRecord(message.id)).toMatchObject({
      status: 'delivered',
      downstreamId: '49000001',
    });
  });

  it('rejects any other refusal, even one whose text contains the record id', async () => {
    const [conflict, invalid] = [await acceptedSale(), await acceptedSale()];
    await enqueue(conflict, 1);
    sap.inject({ status: 409, message: 'Frame number is already registered' });
    await poll();
    await enqueue(invalid, 1);
    // A RegistrationId field of 32 characters refusing something else, naming the id it got.
    sap.inject({ status: 400, message: `RegistrationId ${invalid.id} is longer than the field allows` });
    await poll();
    expect(await getStatusRecord(conflict.id)).toMatchObject({
      status: 'rejected',
      error: 'Frame number is already registered',
    });
    expect(await getStatusRecord(invalid.id)).toMatchObject({ status: 'rejected' });
  });
});
