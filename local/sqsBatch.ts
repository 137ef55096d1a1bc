/**
 * What the local pollers share with each other as Lambda's SQS event source: the options, the clock, receiving,
 * and one invocation of the handler with real SQS event records, deleting the messages it did not report in
 * `batchItemFailures` and leaving everything when it throws (a whole-batch failure).
 */
import {
  ChangeMessageVisibilityBatchCommand,
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
  /** The function's name in serverless.yml, given to the handler's context. Default `deliveryWorker`. */
  functionName?: string;
  /** As deployed (the event source's batchSize, up to 10,000): messages per invocation at most. Default 10. */
  batchSize?: number;
  /**
   * As deployed (the event source's maximumBatchingWindow, seconds): after the first message, go on receiving
   * until the batch is full or this long has passed, then invoke once. Default 0: one receive.
   */
  batchingWindowSeconds?: number;
  /**
   * As deployed (the event source's maximumConcurrency): batches handed to the worker at once at most, each its
   * own invocation. Default 1: one batch at a time.
   */
  maximumConcurrency?: number;
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

/**
 * Whether the poller may hand a batch to the worker now: 0 to go on, or how long to wait first (a held
 * downstream; see local/holdGate.ts).
 */
export interface ReceiveGate {
  (): Promise<number>;
  /**
   * Whether the downstream was held when the gate was last asked: the batch it then lets through is a probe, and
   * goes alone (no other batch in flight beside it).
   */
  held?: () => boolean;
}

/** A gate wait is cut into steps this long, so a stop or the end of a hold is noticed soon. */
export const GATE_STEP_MS = 1000;

/** SQS answers at most this many messages per ReceiveMessage, and takes as many entries per batch call. */
export const SQS_RECEIVE_MAX = 10;

/** While gathering a batch, an empty receive is tried again after this long (within the window). */
export const GATHER_PAUSE_MS = 50;

/**
 * The context Lambda gives an invocation of `functionName`, as far as the handlers read it.
 *
 * @example
 * await handler(event, lambdaContext('reconciler'));
 */
export const lambdaContext = (functionName = 'deliveryWorker'): Context =>
  ({
    awsRequestId: crypto.randomUUID(),
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    logGroupName: 'local',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;

const queueAttributesByUrl = new Map<string, { arn: string; visibilitySeconds: number }>();

/**
 * The queue's ARN (for the event records) and its own visibility timeout, read once per queue URL.
 *
 * @example
 * await queueAttributes(sqs, queueUrl) // { arn: 'arn:aws:sqs:eu-west-1:000000000000:cases', visibilitySeconds: 1080 }
 */
export const queueAttributes = async (sqs: SQSClient, queueUrl: string) => {
  let known = queueAttributesByUrl.get(queueUrl);
  if (!known) {
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['QueueArn', 'VisibilityTimeout'],
      }),
    );
    known = {
      arn: out.Attributes?.QueueArn ?? queueUrl,
      visibilitySeconds: Number(out.Attributes?.VisibilityTimeout ?? 30),
    };
    queueAttributesByUrl.set(queueUrl, known);
  }
  return known;
};

/**
 * One ReceiveMessage of up to `count` (at most 10) messages, with every system attribute (MessageGroupId too) and
 * every message attribute.
 *
 * @example
 * const messages = await receiveMessages(options, 10, 0);
 */
export const receiveMessages = async (
  options: PollOptions,
  count: number,
  waitSeconds: number,
): Promise<Message[]> =>
  (
    await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: Math.min(SQS_RECEIVE_MAX, count),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        // The record's trace context travels as a message attribute (lib/queue/sendRecords.ts).
        MessageAttributeNames: ['All'],
        ...(options.visibilityTimeout === undefined ? {} : { VisibilityTimeout: options.visibilityTimeout }),
      }),
    )
  ).Messages ?? [];

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
    ...(message.Attributes?.MessageGroupId ? { MessageGroupId: message.Attributes.MessageGroupId } : {}),
  },
  // As Lambda hands them over: camel-cased, string values only (the queues carry no binary attributes).
  messageAttributes: Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        stringValue: value.StringValue,
        stringListValues: [],
        binaryListValues: [],
      },
    ]),
  ),
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: arn,
  awsRegion: region,
});

/**
 * Invokes the handler once with `messages` as Lambda would, then deletes the messages it did not report failed
 * (none when it throws: the whole batch failed).
 * @returns how many messages were received, deleted and left for a retry.
 * @example
 * await invokeBatch(options, messages) // { received: 200, deleted: 199, failed: 1 }
 */
export const invokeBatch = async (options: PollOptions, messages: readonly Message[]) => {
  const { sqs, queueUrl, handler } = options;
  const { arn } = await queueAttributes(sqs, queueUrl);
  const records = messages.map((m) => toRecord(m, arn, options.region ?? 'eu-west-1'));
  let failedIds: Set<string>;
  try {
    const response = await handler({ Records: records }, lambdaContext(options.functionName));
    failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch {
    // The whole batch failed: Lambda deletes nothing.
    failedIds = new Set(records.map((r) => r.messageId));
  }
  const done = records.filter((r) => !failedIds.has(r.messageId));
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
 * Gives received messages back to the queue at once (visibility 0), rather than when their visibility ends: a
 * batch gathered but not handed to the worker (the poller stopped while a held downstream kept it waiting).
 *
 * @example
 * await handBack(options, messages);
 */
export const handBack = async (options: PollOptions, messages: readonly Message[]) => {
  for (let start = 0; start < messages.length; start += SQS_RECEIVE_MAX)
    await options.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: messages
          .slice(start, start + SQS_RECEIVE_MAX)
          .map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
};
