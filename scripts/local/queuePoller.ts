/**
 * What Lambda's SQS event source does, for the local runner and the tests: receive a batch, invoke the worker
 * handler with real SQS event records, delete the messages it did not report in `batchItemFailures`, and leave
 * everything when the handler throws (a whole-batch failure). Failed messages come back when their visibility
 * ends, exactly as on AWS, and go to the dead-letter queue after maxReceiveCount receives.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsHandler = (
  event: SQSEvent,
  context: Context,
) => Promise<SQSBatchResponse | undefined | undefined>;

export interface PollOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: SqsHandler;
  /** As deployed (the event source's batchSize). */
  batchSize?: number;
  /** Visibility timeout of received messages; the queue's own (as deployed) when absent. */
  visibilityTimeout?: number;
  /** Seconds to long-poll; 0 answers at once. */
  waitSeconds?: number;
  region?: string;
}

const context = (): Context =>
  ({
    awsRequestId: crypto.randomUUID(),
    functionName: 'deliveryWorker',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:deliveryWorker',
    memoryLimitInMB: '512',
    logGroupName: 'local',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;

const queueArns = new Map<string, string>();

const toRecord = (message: Message, arn: string, region: string): SQSRecord => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: message.Attributes?.SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp:
      message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: arn,
  awsRegion: region,
});

/**
 * Receives one batch and hands it to the handler as Lambda would.
 * @returns how many messages were received, deleted and left for a retry.
 */
export const pollOnce = async (options: PollOptions) => {
  const { sqs, queueUrl, handler } = options;
  let arn = queueArns.get(queueUrl);
  if (!arn) {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    arn = out.Attributes?.QueueArn ?? queueUrl;
    queueArns.set(queueUrl, arn);
  }
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: options.batchSize ?? 10,
      WaitTimeSeconds: options.waitSeconds ?? 0,
      MessageSystemAttributeNames: ['All'],
      ...(options.visibilityTimeout === undefined ? {} : { VisibilityTimeout: options.visibilityTimeout }),
    }),
  );
  const messages = received.Messages ?? [];
  if (messages.length === 0) return { received: 0, deleted: 0, failed: 0 };
  const records = messages.map((m) => toRecord(m, arn, options.region ?? 'eu-west-1'));
  let failedIds: Set<string>;
  try {
    const response = await handler({ Records: records }, context());
    failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch {
    // The whole batch failed: Lambda deletes nothing.
    failedIds = new Set(records.map((r) => r.messageId));
  }
  const done = records.filter((r) => !failedIds.has(r.messageId));
  if (done.length > 0) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
      }),
    );
  }
  return { received: records.length, deleted: done.length, failed: failedIds.size };
};

/**
 * Polls a queue until stopped: long polls while idle, goes on at once while there is work.
 *
 * @example
 * const poller = startPoller({ sqs, queueUrl, handler, batchSize: 10 });
 * await poller.stop();
 */
export const startPoller = (options: PollOptions & { onError?: (error: unknown) => void }) => {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        await pollOnce({ ...options, waitSeconds: options.waitSeconds ?? 1 });
      } catch (error) {
        if (stopped) break;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
};
