/**
 * What EventBridge's schedule does for a scheduled function, for the local runner: invokes its handler every so
 * often with a `Scheduled Event`, one run after another (a run still under way delays the next, never overlaps it).
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { LOCAL_ACCOUNT } from './eventBus.ts';
import { localRegion } from './project.ts';
import { lambdaContext } from './sqsBatch.ts';

export type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

/**
 * Starts invoking `handler` every `seconds`; `stop` waits for a run under way.
 *
 * @example
 * const schedule = startSchedule({ functionName: 'reconciler', handler, seconds: 60, onError: console.error });
 * await schedule.stop();
 */
export const startSchedule = (options: {
  functionName: string;
  handler: ScheduledHandler;
  seconds: number;
  onError: (error: unknown) => void;
}) => {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      const event: ScheduledEvent = {
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: LOCAL_ACCOUNT,
        time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: localRegion,
        resources: [`arn:aws:events:${localRegion}:${LOCAL_ACCOUNT}:rule/${options.functionName}-schedule`],
        detail: {},
      };
      try {
        await options.handler(event, lambdaContext(options.functionName));
      } catch (error) {
        options.onError(error);
      }
    });
  }, options.seconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
