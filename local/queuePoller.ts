/**
 * What Lambda's SQS event source does, for the local runner and the tests: gather a batch (up to the batch size,
 * within the batching window), invoke the worker handler once with real SQS event records, delete the messages it did not report in `batchItemFailures`, and leave
 * everything when the handler throws (a whole-batch failure). Failed messages come back when their visibility
 * ends, exactly as on AWS, and go to the dead-letter queue after maxReceiveCount receives. The clients are served
 * fairly by the queue itself, as on AWS (local/emulators/fauxqs/fairQueue.ts): a receive answers a quiet client's messages before
 * those of a client with more than its share in flight.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { batchSlots } from './batchSlots.ts';
import {
  GATE_STEP_MS,
  GATHER_PAUSE_MS,
  handBack,
  invokeBatch,
  type PollOptions,
  queueAttributes,
  type ReceiveGate,
  receiveMessages,
  SQS_RECEIVE_MAX,
  systemClock,
} from './sqsBatch.ts';

export {
  type PollClock,
  type PollOptions,
  type ReceiveGate,
  type SqsHandler,
  systemClock,
} from './sqsBatch.ts';

/**
 * Receives one batch as Lambda's event source gathers it: up to `batchSize` messages, over repeated receives (SQS
 * answers at most 10 a call) until the batch is full or `batchingWindowSeconds` have passed since the first one
 * arrived; a lone message waits at most the window. Empty when nothing arrived within the long poll.
 *
 * @example
 * const messages = await gatherBatch({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 });
 */
export const gatherBatch = async (options: PollOptions): Promise<Message[]> => {
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? SQS_RECEIVE_MAX;
  await queueAttributes(options.sqs, options.queueUrl);
  const messages = await receiveMessages(options, batchSize, options.waitSeconds ?? 0);
  if (messages.length === 0) return messages;
  // The window runs from the first message, as Lambda's does.
  const windowEnds = clock.now() + (options.batchingWindowSeconds ?? 0) * 1000;
  while (messages.length < batchSize && clock.now() < windowEnds) {
    const more = await receiveMessages(options, batchSize - messages.length, 0);
    messages.push(...more);
    if (more.length === 0) await clock.sleep(Math.min(GATHER_PAUSE_MS, windowEnds - clock.now()));
  }
  return messages;
};

/**
 * Receives one batch and hands it to the handler as Lambda would (`gatherBatch`, then one invocation).
 * @returns how many messages were received, deleted and left for a retry.
 * @example
 * await pollOnce({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 }) // { received: 37, deleted: 37, failed: 0 }
 */
export const pollOnce = async (options: PollOptions) => {
  const messages = await gatherBatch(options);
  if (messages.length === 0) return { received: 0, deleted: 0, failed: 0 };
  return invokeBatch(options, messages);
};

/**
 * Polls a queue until stopped, as Lambda's event source does: gathers a batch whenever fewer than
 * `maximumConcurrency` are in flight (local/batchSlots.ts), long-polling while idle, and hands it to the handler in
 * its own slot. With a `gate`, asks it once a batch is gathered (so a hold that began meanwhile is seen), waits as
 * long as it says, holding the batch, and sends a held downstream's probe alone. A stop hands a batch it holds back
 * to the queue.
 *
 * @example
 * const poller = startPoller({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1, maximumConcurrency: 2 });
 * await poller.stop(); // the batches in flight end first
 */
export const startPoller = (
  options: PollOptions & {
    onError?: (error: unknown) => void;
    gate?: ReceiveGate;
  },
) => {
  const pollOptions = { ...options, waitSeconds: options.waitSeconds ?? 1 };
  const clock = options.clock ?? systemClock;
  let stopped = false;
  const slots = batchSlots({ maximumConcurrency: options.maximumConcurrency, gate: options.gate });
  /** Reports a failure, then waits a second, so a queue that answers errors is not asked in a spin. */
  const failed = async (error: unknown) => {
    if (stopped) return;
    options.onError?.(error);
    await clock.sleep(1000);
  };
  /** Waits until the gate lets a batch start: false when stopped meanwhile. */
  const admitted = async () => {
    for (;;) {
      const waitMs = await slots.admit();
      if (waitMs === 0) return true;
      if (stopped) return false;
      await clock.sleep(Math.min(waitMs, GATE_STEP_MS));
      if (stopped) return false;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      let messages: Message[] = [];
      try {
        if (!slots.free()) {
          await slots.oneEnded();
          continue;
        }
        messages = await gatherBatch(pollOptions);
        if (messages.length === 0) {
          if (pollOptions.waitSeconds === 0) await clock.sleep(GATHER_PAUSE_MS);
          continue;
        }
        if (!(await admitted())) {
          await handBack(options, messages);
          continue;
        }
        const batch = messages;
        messages = [];
        slots.start(() => invokeBatch(pollOptions, batch).catch(failed));
      } catch (error) {
        // A batch gathered but not started goes back to the queue rather than waiting out its visibility.
        if (messages.length > 0) await handBack(options, messages).catch(() => undefined);
        await failed(error);
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await slots.drained();
    },
    /** Batches handed to the worker and not yet ended. */
    inFlight: () => slots.inFlight(),
  };
};
