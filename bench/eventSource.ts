/**
 * Lambda's SQS event source as the batching benchmarks need it: a batch of up to `batchSize` messages gathered
 * over several receives (SQS gives at most 10 a receive) for at most `windowSeconds` after the first message
 * arrives (MaximumBatchingWindowInSeconds), then one invocation of the handler with real SQS event records,
 * then the messages it did not report in `batchItemFailures` deleted (all kept when it throws). `pollers` loops
 * at once stand for the event source's maximumConcurrency. Window 0 and batch 10 is one receive per batch, as
 * scripts/local/queuePoller.ts's `pollOnce` does; the local poller gathers no larger batch, so this is the
 * benchmark's own.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface EventSourceOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: SqsHandler;
  batchSize: number;
  windowSeconds: number;
  /** maximumConcurrency: invocations at once. */
  pollers: number;
  /** Long poll while idle, seconds (Lambda's pollers wait 20 s; 1 s lets a run stop soon). */
  waitSeconds?: number;
}

export interface EventSourceTally {
  invocations: number;
  received: number;
  deleted: number;
  failed: number;
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

const toRecord = (message: Message, arn: string): SQSRecord => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: 'local',
    ApproximateFirstReceiveTimestamp:
      message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: arn,
  awsRegion: 'eu-west-1',
});

/**
 * Starts the event source; `stop()` ends it after the invocations under way.
 *
 * @example
 * const source = startEventSource({ sqs, queueUrl, handler, batchSize: 200, windowSeconds: 1, pollers: 2 });
 * await source.stop(); // { invocations, received, deleted, failed }
 */
export const startEventSource = (options: EventSourceOptions) => {
  const { sqs, queueUrl, handler } = options;
  const tally: EventSourceTally = { invocations: 0, received: 0, deleted: 0, failed: 0 };
  let stopped = false;
  let arn: string | undefined;
  const receive = (max: number, waitSeconds: number) =>
    sqs
      .send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, max),
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['All'],
        }),
      )
      .then((out) => out.Messages ?? []);

  const gather = async (): Promise<Message[]> => {
    const first = await receive(options.batchSize, options.waitSeconds ?? 1);
    if (first.length === 0) return first;
    const batch = [...first];
    const closesAt = performance.now() + options.windowSeconds * 1000;
    while (batch.length < options.batchSize && !stopped) {
      const left = closesAt - performance.now();
      if (left <= 0) break;
      const more = await receive(options.batchSize - batch.length, 0);
      if (more.length === 0) {
        // Nothing waiting: look again a little later, within the window.
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 50)));
        continue;
      }
      batch.push(...more);
    }
    return batch;
  };

  const loop = async () => {
    while (!stopped) {
      const messages = await gather();
      if (messages.length === 0) continue;
      const records = messages.map((m) => toRecord(m, arn as string));
      tally.invocations++;
      tally.received += records.length;
      let failedIds: Set<string>;
      try {
        const response = await handler({ Records: records }, context());
        failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      } catch {
        failedIds = new Set(records.map((r) => r.messageId));
      }
      tally.failed += failedIds.size;
      const done = records.filter((r) => !failedIds.has(r.messageId));
      for (let start = 0; start < done.length; start += 10) {
        const chunk = done.slice(start, start + 10);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
          }),
        );
      }
      tally.deleted += done.length;
    }
  };

  const running = (async () => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    arn = out.Attributes?.QueueArn ?? queueUrl;
    await Promise.all(Array.from({ length: options.pollers }, loop));
  })();
  return {
    tally,
    stop: async (): Promise<EventSourceTally> => {
      stopped = true;
      await running;
      return { ...tally };
    },
  };
};
