/**
 * Lambda's SQS event source for the batching and outage benchmarks: `pollers` loops at once (maximumConcurrency),
 * each calling the local poller's `pollOnce` (local/queuePoller.ts: up to `batchSize` messages gathered
 * over receives of 10 for at most the batching window after the first, one invocation, the messages not reported
 * failed deleted) again and again, counting what they did. Unlike `npm start`'s pollers it has no hold gate: it
 * keeps receiving while a downstream is held, as Lambda's event source does on AWS.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { pollOnce, type SqsHandler } from '../local/queuePoller.ts';

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

/**
 * Starts the event source; `stop()` ends it after the invocations under way.
 *
 * @example
 * const source = startEventSource({ sqs, queueUrl, handler, batchSize: 200, windowSeconds: 1, pollers: 2 });
 * await source.stop(); // { invocations, received, deleted, failed }
 */
export const startEventSource = (options: EventSourceOptions) => {
  const tally: EventSourceTally = { invocations: 0, received: 0, deleted: 0, failed: 0 };
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const result = await pollOnce({
        sqs: options.sqs,
        queueUrl: options.queueUrl,
        handler: options.handler,
        batchSize: options.batchSize,
        batchingWindowSeconds: options.windowSeconds,
        waitSeconds: options.waitSeconds ?? 1,
      });
      if (result.received === 0) continue;
      tally.invocations++;
      tally.received += result.received;
      tally.deleted += result.deleted;
      tally.failed += result.failed;
    }
  };
  const running = Promise.all(Array.from({ length: options.pollers }, loop));
  return {
    tally,
    stop: async (): Promise<EventSourceTally> => {
      stopped = true;
      await running;
      return { ...tally };
    },
  };
};
