/**
 * What Lambda's SQS event source does, for the local runner and the tests: gather a batch (up to the batch size,
 * within the batching window), invoke the worker handler once with real SQS event records, delete the messages it did not report in `batchItemFailures`, and leave
 * everything when the handler throws (a whole-batch failure). Failed messages come back when their visibility
 * ends, exactly as on AWS, and go to the dead-letter queue after maxReceiveCount receives. `startPoller` serves
 * the clients fairly, as SQS fair queues do (scripts/local/fairPoller.ts); `pollOnce` is first in, first out.
 */
import { type FairPollOptions, startFairPoll } from './fairPoller.ts';
import {
  GATHER_PAUSE_MS,
  invokeBatch,
  type PollClock,
  type PollOptions,
  queueAttributes,
  receiveMessages,
  SQS_RECEIVE_MAX,
  systemClock,
} from './sqsBatch.ts';

export { type PollClock, type PollOptions, type SqsHandler, systemClock } from './sqsBatch.ts';

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
 * Whether the poller may receive now, asked before each receive: 0 to go on, or how long to wait first (a held
 * downstream; see scripts/local/holdGate.ts).
 */
export type ReceiveGate = () => Promise<number>;

/** A gate wait is cut into steps this long, so a stop or the end of a hold is noticed soon. */
const GATE_STEP_MS = 1000;

/**
 * Polls a queue until stopped: long polls while idle, goes on at once while there is work; with a `gate`, waits
 * as long as it says before each receive. It serves the clients fairly as SQS fair queues do
 * (scripts/local/fairPoller.ts), unless `fair` is false: then first in, first out, one batch received at a time.
 *
 * @example
 * const poller = startPoller({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 });
 * await poller.stop();
 */
export const startPoller = (
  options: FairPollOptions & {
    onError?: (error: unknown) => void;
    gate?: ReceiveGate;
    /** Serve the clients fairly (default), or first in, first out (false: fauxqs's own order). */
    fair?: boolean;
  },
) => {
  const clock = options.clock ?? systemClock;
  const pollOptions = { ...options, waitSeconds: options.waitSeconds ?? 1 };
  const fairPoll = options.fair === false ? undefined : startFairPoll(pollOptions);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const waitMs = options.gate ? await options.gate() : 0;
        if (waitMs > 0) {
          // Held messages stay invisible through a long hold.
          await fairPoll?.upkeep();
          await clock.sleep(Math.min(waitMs, GATE_STEP_MS));
          continue;
        }
        if (fairPoll) await fairPoll.step();
        else await pollOnce(pollOptions);
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
      // Messages held ahead go back to the queue now rather than when their visibility ends.
      await fairPoll?.release().catch((error: unknown) => options.onError?.(error));
    },
    /** Messages received and held ahead, not yet handed to the worker. */
    held: () => fairPoll?.held() ?? 0,
  };
};
