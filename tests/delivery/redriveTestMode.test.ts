/**
 * Redrive works on test records (docs/API.md, "Test mode"): a test client's sale that the SAP simulator fails every
 * time (last name `FAIL`) ends `failed` with no dead letter; redriven by hand it goes back to `accepted`, is queued
 * with its `test` mark, and the worker answers it with the simulator again, never with SAP. SAP is the sandbox,
 * which logs every request: a live sale failed by SAP and redriven alongside reaches it (the planted control: the
 * log would show a test record's request).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { redriveByHand } from '../../lib/redrive/redrive.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { localClientConfig } from '../../local/aws.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { DELIVERY, deliverAt, receive, secondsAfter } from './support.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sqs: SQSClient;
let sap: SapSandbox;
const T0 = new Date('2026-11-28T08:00:00.000Z');

beforeAll(async () => {
  // The live sale's failures must not open a hold.
  process.env.OUTAGE_AFTER_FAILURES = '1000';
  [aws, sap] = await Promise.all([isolatedAws(), startSapSandbox()]);
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  resetDownstreamClients();
  sqs = new SQSClient({ ...localClientConfig(aws.sqsEndpoint), useQueueUrlAsEndpoint: false });
});
afterAll(async () => {
  sqs.destroy();
  await sap.stop();
});

const salesQueue = () => aws.resources.queues.SalesRegistrationQueue.url;
const deadLetters = () => aws.resources.queues.SalesRegistrationDeadLetterQueue.url;

/** One sale accepted through the handler with the client's key; its id and its queued message's body. */
const acceptSale = async (key: string, Name: string) => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame(), Name })], {
      'x-api-key': key,
    }),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  const id: string = JSON.parse(response.body).registrations[0].id;
  const { byId } = await receive(sqs, salesQueue(), 1);
  return { id, body: byId(id).body };
};

/**
 * Hands a message body to the worker at `at`, as the event source hands over a message whose wait is over (a copy
 * sent and received: fauxqs keeps real time, the worker's backoff would hide the original for minutes).
 */
const deliverBody = async (body: string, at: Date) => {
  await sqs.send(new SendMessageCommand({ QueueUrl: salesQueue(), MessageBody: body }));
  const { records } = await receive(sqs, salesQueue(), 1);
  return deliverAt(records, createDownstreamHolds(), at);
};

/** The SAP sandbox's requests whose body names the record (its RegistrationId). */
const sapRequestsOf = (id: string) => sap.requests.filter((request) => request.body.includes(id));

describe('redrive of test records', () => {
  it('reopens a failed test sale, queues it marked test, and the simulator answers it again, never SAP', async () => {
    // Prepare: a test sale the simulator fails every time, and a live sale SAP fails every time, both delivered
    // until they are failed.
    const test = await acceptSale(testKeys.testDealer, 'Fail');
    const live = await acceptSale(testKeys.dealer, 'Sample');
    let at = T0;
    for (let attempt = 0; attempt < DELIVERY.maxAttempts; attempt++) {
      sap.inject({ status: 503, message: 'Service unavailable' });
      await deliverBody(test.body, at);
      await deliverBody(live.body, at);
      at = secondsAfter(at, 3600);
    }
    const failedTest = await getStatusRecord(test.id);
    const failedLive = await getStatusRecord(live.id);
    const deadLettered = (await aws.drain(deadLetters())).map((message) => message.id);
    sap.clearFaults();
    // Act
    const redriven = await redriveByHand({
      sqs,
      kind: 'salesRegistration',
      queueUrl: salesQueue(),
      deadLetterQueueUrl: deadLetters(),
    });
    const reopened = await getStatusRecord(test.id);
    const queued = await aws.drain(salesQueue());
    // Assess: failed by the simulator, no dead letter; reopened and queued with its mark.
    expect(failedTest).toMatchObject({ status: 'failed', test: true, attempts: DELIVERY.maxAttempts });
    expect(failedTest?.error).toMatch(/SAP simulator unavailable/);
    expect(failedLive).toMatchObject({ status: 'failed', attempts: DELIVERY.maxAttempts });
    expect(failedLive?.test).toBeUndefined();
    expect(deadLettered).toEqual([live.id]);
    expect(redriven).toEqual({ moved: 0, requeued: 2 });
    expect(reopened).toMatchObject({ status: 'accepted', test: true });
    const again = queued.find((message) => message.id === test.id);
    expect(again).toEqual({
      id: test.id,
      kind: 'salesRegistration',
      requestId: expect.any(String),
      owner: 'example-dealer-test',
      test: true,
    });
    expect(queued.find((message) => message.id === live.id)?.test).toBeUndefined();

    // Act: the worker takes both redriven messages.
    await deliverBody(JSON.stringify(again), at);
    await deliverBody(JSON.stringify(queued.find((message) => message.id === live.id)), at);
    // Assess: the test sale answered by the simulator (its transient failure again: one attempt more, and a
    // redriven record has its tries anew, so it waits for the next), never by SAP; the live sale delivered by SAP,
    // which logged its requests.
    const answered = await getStatusRecord(test.id);
    expect(answered).toMatchObject({ status: 'accepted', test: true, attempts: DELIVERY.maxAttempts + 1 });
    expect(answered?.error).toMatch(/SAP simulator unavailable/);
    expect(await getStatusRecord(live.id)).toMatchObject({ status: 'delivered' });
    expect(sapRequestsOf(live.id).length).toBeGreaterThan(0);
    expect(sapRequestsOf(test.id)).toEqual([]);
    expect(sap.registrations.map((registration) => registration.RegistrationId)).toEqual([live.id]);
    expect(await aws.drain(deadLetters())).toEqual([]);
  });
});
