/**
 * What the worker-level hold and batching tests share: records accepted through the intake handlers, their
 * messages received from fauxqs as the event source hands them over, and one batch delivered at a chosen time.
 */
import { DeleteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { deliverMessages } from '../../lib/delivery/deliverBatch.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import type { DownstreamHolds } from '../../lib/outage/hold.ts';
import type { DeliverySettings, OutageSettings } from '../../lib/settings/settings.ts';
import { recordsTable } from '../../lib/settings/settings.ts';
import { localClientConfig } from '../../local/aws.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';

/** A backoff long enough that a failed record's message stays hidden (in flight) for the whole test. */
export const DELIVERY: DeliverySettings = { maxAttempts: 3, retryBaseSeconds: 60, leaseSeconds: 90 };
export const OUTAGE: OutageSettings = {
  afterFailures: 3,
  probeSeconds: 30,
  failureRate: 0.5,
  rateWindow: 20,
  apiUsageShare: 0.8,
  cacheSeconds: 0,
};

/** Sales registrations accepted in one request; their ids. */
export const acceptSales = async (count: number): Promise<string[]> => {
  const records = Array.from({ length: count }, () => salesRegistrationInput({ FrameNum: uniqueFrame() }));
  const response = await salesHandler(jsonPost('/erp/sales_registration', records), lambdaContext());
  return JSON.parse(response.body).registrations.map((r: { id: string }) => r.id);
};

/** Cases accepted one by one; their CrmIds. */
export const acceptCases = async (
  count: number,
  overrides: Record<string, unknown> = {},
): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await caseHandler(
      jsonPost('/crm/case', caseInput({ frameNo: uniqueFrame(), ...overrides })),
      lambdaContext(),
    );
    ids.push(JSON.parse(response.body).CrmId);
  }
  return ids;
};

/** Receives `count` messages (hidden for 10 minutes), as SQS records; `byId` finds the one of a record. */
export const receive = async (sqs: SQSClient, queueUrl: string, count: number) => {
  const records: SQSRecord[] = [];
  while (records.length < count) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, count - records.length),
        VisibilityTimeout: 600,
        WaitTimeSeconds: 1,
      }),
    );
    for (const message of out.Messages ?? []) {
      records.push({
        messageId: message.MessageId ?? '',
        receiptHandle: message.ReceiptHandle ?? '',
        body: message.Body ?? '',
        attributes: { ApproximateReceiveCount: '1' },
        eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:queue',
      } as unknown as SQSRecord);
    }
  }
  const byId = (id: string) => {
    const found = records.find((record) => JSON.parse(record.body).id === id);
    if (!found) throw new Error(`no message of ${id}`);
    return found;
  };
  return { records, byId };
};

/** Delivers one batch of messages as a worker instance with `holds` does at `now`; the results' error names. */
export const deliverAt = async (
  records: SQSRecord[],
  holds: DownstreamHolds,
  now: Date,
  tally = new OutcomeTally(),
) => {
  const results = await deliverMessages(records, {
    settings: DELIVERY,
    log: logger,
    tally,
    now: () => now,
    holds,
    outage: OUTAGE,
  });
  return results.map((result) => (result.ok ? 'done' : (result.error as Error).name));
};

/** Forgets both downstreams' holds (a fresh start per test). */
export const forgetHolds = async (dynamoEndpoint: string) => {
  const dynamo = new DynamoDBClient(localClientConfig(dynamoEndpoint));
  for (const pk of ['hold#erp', 'hold#crm']) {
    await dynamo.send(new DeleteItemCommand({ TableName: recordsTable(), Key: { pk: { S: pk } } }));
  }
};

/** `seconds` after `from`. */
export const secondsAfter = (from: Date, seconds: number) => new Date(from.getTime() + seconds * 1000);
