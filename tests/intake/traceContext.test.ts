/**
 * A record keeps its request's trace (contract section 8): intake joins the request's `traceparent`, stores its span's
 * context on the status record (in the write it makes anyway), queues it as the message's `traceparent` attribute
 * (which the local poller hands to the worker as Lambda does), and the look-up answers the record's `traceId`.
 */
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { queuedRecordOf } from '../../lib/queue/queuedRecord.ts';
import { sendRecords } from '../../lib/queue/sendRecords.ts';
import { getRecordState } from '../../lib/store/statusRecords.ts';
import { invokeBatch, receiveMessages } from '../../local/sqsBatch.ts';
import { jsonPost, lambdaContext, statusGet } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const SALES = '/erp/sales_registration';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-b7ad6b7169203331-01`;

let aws: Awaited<ReturnType<typeof isolatedAws>>;

beforeAll(async () => {
  aws = await isolatedAws();
});

/** The worker's view of every message now on the sales queue, as the local poller hands it over. */
const workerEvents = async (): Promise<SQSEvent['Records']> => {
  const queueUrl = aws.resources.queues.SalesRegistrationQueue.url;
  const seen: SQSEvent['Records'] = [];
  for (;;) {
    const messages = await receiveMessages({ sqs: aws.sqs, queueUrl, handler: async () => undefined }, 10, 0);
    if (messages.length === 0) return seen;
    await invokeBatch(
      {
        sqs: aws.sqs,
        queueUrl,
        handler: async (event: SQSEvent) => {
          seen.push(...event.Records);
          return { batchItemFailures: [] };
        },
      },
      messages,
    );
  }
};

describe("a record keeps its request's trace", () => {
  it('POST with a traceparent: the record, its message and its look-up carry that trace id', async () => {
    // Prepare
    await workerEvents();
    const event = jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
      traceparent: CLIENT_TRACEPARENT,
    });
    // Act
    const response = await salesHandler(event, lambdaContext());
    const [{ id }] = JSON.parse(response.body).registrations;
    const lookUp = await recordStatus(statusGet(`${SALES}/${id}`, { id }), lambdaContext());
    const records = await workerEvents();
    // Assess
    expect(response.statusCode).toBe(200);
    const stored = await getRecordState(id);
    expect(stored?.traceparent).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));
    // The intake span's own id, a child of the client's span
    expect(stored?.traceparent).not.toBe(CLIENT_TRACEPARENT);
    expect(JSON.parse(lookUp.body).traceId).toBe(CLIENT_TRACE);
    const message = records.find((record) => JSON.parse(record.body).id === id);
    expect(message?.messageAttributes.traceparent?.stringValue).toBe(stored?.traceparent);
    expect(JSON.parse(message?.body ?? '{}').traceparent).toBeUndefined();
  });

  it('POST without one: a new trace, the same everywhere', async () => {
    // Prepare
    await workerEvents();
    const event = jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })]);
    // Act
    const response = await salesHandler(event, lambdaContext());
    const [{ id }] = JSON.parse(response.body).registrations;
    const lookUp = JSON.parse(
      (await recordStatus(statusGet(`${SALES}/${id}`, { id }), lambdaContext())).body,
    );
    const records = await workerEvents();
    // Assess
    expect(lookUp.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(lookUp.traceId).not.toBe(CLIENT_TRACE);
    const message = records.find((record) => JSON.parse(record.body).id === id);
    expect(message?.messageAttributes.traceparent?.stringValue).toContain(lookUp.traceId);
  });

  it('a record queued again (the reconciler, a redrive) keeps its trace in the message', async () => {
    // Prepare
    await workerEvents();
    const response = await salesHandler(
      jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
        traceparent: CLIENT_TRACEPARENT,
      }),
      lambdaContext(),
    );
    const [{ id }] = JSON.parse(response.body).registrations;
    await workerEvents();
    const stored = await getRecordState(id);
    // Act: what every producer queues a stored record with
    await sendRecords(aws.resources.queues.SalesRegistrationQueue.url, [
      queuedRecordOf(stored as NonNullable<typeof stored>),
    ]);
    const records = await workerEvents();
    // Assess
    expect(records).toHaveLength(1);
    expect(records[0].messageAttributes.traceparent?.stringValue).toBe(stored?.traceparent);
  });
});
