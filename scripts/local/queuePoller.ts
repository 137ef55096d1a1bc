/**
 * What Lambda's SQS event source does, for the local runner and the tests: gather a batch (up to the batch size,
 * within the batching window), invoke the worker handler once with real SQS event records, delete the messages it did not report in `batchItemFailures`, and leave
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
  /** As deployed (the event source's batchSize, up to 10,000): messages per invocation at most. Default 10. */
  batchSize?: number;
  /**
   * As deployed (the event source's maximumBatchingWindow, seconds): after the first message, go on receiving
   * until the batch is full or this long has passed, then invoke once. Default 0: one receive.
   */
  batchingWindowSeconds?: number;
  /** Visibility timeout of received messages; the queue's own (as deployed) when absent. */
  visibilityTimeout?: number;
  /** Seconds to long-poll for the first message; 0 answers at once. */
  waitSeconds?: number;
  region?: string;
  /** The clock the window is measured on (tests move it). */
  clock?: PollClock;
}

/** Time as the poller reads and waits for it. */
export interface PollClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const systemClock: PollClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** SQS answers at most this many messages per ReceiveMessage. */
const SQS_RECEIVE_MAX = 10;

/** While gathering a batch, an empty receive is tried again after this long (within the window). */
const GATHER_PAUSE_MS = 50;

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
 * Receives one batch and hands it to the handler as Lambda would: up to `batchSize` messages, gathered over
 * repeated receives (SQS answers at most 10 a call) until the batch is full or `batchingWindowSeconds` have passed
 * since the first one arrived, then one invocation; a lone message waits at most the window.
 * @returns how many messages were received, deleted and left for a retry.
 * @example
 * await pollOnce({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 }) // { received: 37, deleted: 37, failed: 0 }
 */
export const pollOnce = async (options: PollOptions) => {
  const { sqs, queueUrl, handler } = options;
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? SQS_RECEIVE_MAX;
  let arn = queueArns.get(queueUrl);
  if (!arn) {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    arn = out.Attributes?.QueueArn ?? queueUrl;
    queueArns.set(queueUrl, arn);
  }
  const receive = async (count: number, waitSeconds: number) =>
    (
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(SQS_RECEIVE_MAX, count),
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['All'],
          ...(options.visibilityTimeout === undefined
            ? {}
            : { VisibilityTimeout: options.visibilityTimeout }),
        }),
      )
    ).Messages ?? [];
  const messages = await receive(batchSize, options.waitSeconds ?? 0);
  if (messages.length === 0) return { received: 0, deleted: 0, failed: 0 };
  // The window runs from the first message, as Lambda's does.
  const windowEnds = clock.now() + (options.batchingWindowSeconds ?? 0) * 1000;
  while (messages.length < batchSize && clock.now() < windowEnds) {
    const more = await receive(batchSize - messages.length, 0);
    messages.push(...more);
    if (more.length === 0) await clock.sleep(Math.min(GATHER_PAUSE_MS, windowEnds - clock.now()));
  }
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
  // DeleteMessageBatch takes at most 10 entries.
  for (let start = 0; start < done.length; start += SQS_RECEIVE_MAX) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done
          .slice(start, start + SQS_RECEIVE_MAX)
          .map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
      }),
    );
  }
  return { received: records.length, deleted: done.length, failed: failedIds.size };
};

/**
 * Whether the poller may receive now, asked before each receive: 0 to go on, or how long to wait first (a held
 * downstream; see scripts/local/holdGate.ts).
 */
export type ReceiveGate = () => Promise<number>;

/** A gate wait is cut into steps this long, so a stop or the end of a hold is noticed soon. */
const GATE_STEP_MS = 1000;

/**
 * Polls a queue until stopped: long polls while idle, goes on at once while there is work; with a `gate`, waits
 * as long as it says before each receive.
 *
 * @example
 * const poller = startPoller({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 });
 * await poller.stop();
 */
export const startPoller = (
  options: PollOptions & { onError?: (error: unknown) => void; gate?: ReceiveGate },
) => {
  const clock = options.clock ?? systemClock;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const waitMs = options.gate ? await options.gate() : 0;
        if (waitMs > 0) {
          await clock.sleep(Math.min(waitMs, GATE_STEP_MS));
          continue;
        }
        await pollOnce({ ...options, waitSeconds: options.waitSeconds ?? 1 });
      } catch (error) {
        if (stopped) break;
        options.onError?.(error);
        await clock.sleep(1000);
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
