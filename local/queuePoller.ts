/**
 * What Lambda's SQS event source does, for the local runner and the tests: gather a batch (up to the batch size,
 * within the batching window), invoke the worker handler once with real SQS event records, delete the messages it did not report in `batchItemFailures`, and leave
 * everything when the handler throws (a whole-batch failure). Failed messages come back when their visibility
 * ends, exactly as on AWS, and go to the dead-letter queue after maxReceiveCount receives. `startPoller` serves
 * the clients fairly, as SQS fair queues do (local/fairPoller.ts); `pollOnce` is first in, first out.
 */
import { batchSlots } from './batchSlots.ts';
import { type FairPollOptions, startFairPoller } from './fairPoller.ts';
import {
  GATE_STEP_MS,
  GATHER_PAUSE_MS,
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
 * Receives one batch and hands it to the handler as Lambda would: up to `batchSize` messages, gathered over
 * repeated receives (SQS answers at most 10 a call) until the batch is full or `batchingWindowSeconds` have passed
 * since the first one arrived, then one invocation; a lone message waits at most the window.
 * @returns how many messages were received, deleted and left for a retry.
 * @example
 * await pollOnce({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 }) // { received: 37, deleted: 37, failed: 0 }
 */
export const pollOnce = async (options: PollOptions) => {
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? SQS_RECEIVE_MAX;
  await queueAttributes(options.sqs, options.queueUrl);
  const messages = await receiveMessages(options, batchSize, options.waitSeconds ?? 0);
  if (messages.length === 0) return { received: 0, deleted: 0, failed: 0 };
  // The window runs from the first message, as Lambda's does.
  const windowEnds = clock.now() + (options.batchingWindowSeconds ?? 0) * 1000;
  while (messages.length < batchSize && clock.now() < windowEnds) {
    const more = await receiveMessages(options, batchSize - messages.length, 0);
    messages.push(...more);
    if (more.length === 0) await clock.sleep(Math.min(GATHER_PAUSE_MS, windowEnds - clock.now()));
  }
  return invokeBatch(options, messages);
};

/**
 * Polls a queue until stopped: long polls while idle, goes on at once while there is work, with up to
 * `maximumConcurrency` batches in flight at once (as Lambda's event source; local/batchSlots.ts); with a
 * `gate`, waits as long as it says before each batch, and sends a held downstream's probe alone. It serves the
 * clients fairly as SQS fair queues do (local/fairPoller.ts), unless `fair` is false: then first in, first
 * out, each slot receiving its own batch (`pollOnce`).
 *
 * @example
 * const poller = startPoller({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1, maximumConcurrency: 2 });
 * await poller.stop(); // the batches in flight end first
 */
export const startPoller = (
  options: FairPollOptions & {
    onError?: (error: unknown) => void;
    gate?: ReceiveGate;
    /** Serve the clients fairly (default), or first in, first out (false: fauxqs's own order). */
    fair?: boolean;
  },
) => {
  const pollOptions = { ...options, waitSeconds: options.waitSeconds ?? 1 };
  if (options.fair !== false) return startFairPoller(pollOptions);
  const clock = options.clock ?? systemClock;
  let stopped = false;
  const slots = batchSlots({ maximumConcurrency: options.maximumConcurrency, gate: options.gate });
  /** Reports a failure, then keeps its slot a second, so a queue that answers errors is not asked in a spin. */
  const failed = async (error: unknown) => {
    if (stopped) return;
    options.onError?.(error);
    await clock.sleep(1000);
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        if (!slots.free()) {
          await slots.oneEnded();
          continue;
        }
        const waitMs = await slots.admit();
        if (waitMs > 0) {
          await clock.sleep(Math.min(waitMs, GATE_STEP_MS));
          continue;
        }
        slots.start(() => pollOnce(pollOptions).catch(failed));
      } catch (error) {
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
    /** Messages received and held ahead, not yet handed to the worker (none first in, first out). */
    held: () => 0,
    /** Batches being received or handed to the worker. */
    inFlight: () => slots.inFlight(),
  };
};
