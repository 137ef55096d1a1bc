/**
 * How npm start invokes each function of serverless.yml: through its own handler, on its own event source, as AWS
 * does. `http` events are served by serverless-offline (local/offline.ts), `sqs` events by a poller standing in for
 * Lambda's event source mapping (local/queuePoller.ts), `schedule` events by a timer at their rate. Any other event
 * is reported as unserved, and npm start refuses to start with one (it would quietly not run what AWS runs).
 */
import { type EventSourceSettings, eventSourcesOf } from './eventSources.ts';
import type { ResolvedServerlessConfig } from './serverlessConfig.ts';

/** One event of one function, and how npm start invokes the function for it. */
export type LocalSource = { functionName: string; handler: string } & (
  | { kind: 'http'; method: string; path: string }
  | { kind: 'sqs'; queueId: string; settings: EventSourceSettings }
  | { kind: 'schedule'; rateSeconds: number }
);

/** An event npm start cannot invoke its function for. */
export interface Unserved {
  functionName: string;
  event: string;
  why: string;
}

const UNITS: Record<string, number> = {
  minute: 60,
  minutes: 60,
  hour: 3600,
  hours: 3600,
  day: 86_400,
  days: 86_400,
};

/**
 * A schedule's `rate(<n> <unit>)` in seconds; undefined for anything else (cron expressions are not run locally).
 *
 * @example
 * rateSeconds('rate(1 minute)') // 60
 */
export const rateSeconds = (expression: unknown): number | undefined => {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(String(expression));
  return match ? Number(match[1]) * UNITS[match[2]] : undefined;
};

/**
 * Every event of every function of the resolved serverless.yml, with how npm start invokes it, and the events it
 * cannot serve.
 *
 * @example
 * localFunctionSources(config).sources.find((s) => s.functionName === 'reconciler') // { kind: 'schedule', rateSeconds: 60, ... }
 */
export const localFunctionSources = (
  config: ResolvedServerlessConfig,
): { sources: LocalSource[]; unserved: Unserved[] } => {
  const queues = Object.entries(eventSourcesOf(config));
  const sources: LocalSource[] = [];
  const unserved: Unserved[] = [];
  for (const [functionName, fn] of Object.entries(config.functions ?? {})) {
    const handler = fn.handler ?? '';
    const events = (fn.events ?? []) as Record<string, Record<string, unknown> | undefined>[];
    if (events.length === 0) unserved.push({ functionName, event: '(none)', why: 'it has no event' });
    for (const event of events) {
      const [kind] = Object.keys(event);
      const settings = event[kind] ?? {};
      if (kind === 'http') {
        sources.push({
          functionName,
          handler,
          kind,
          method: String(settings.method).toUpperCase(),
          path: `/${String(settings.path).replace(/^\//, '')}`,
        });
      } else if (kind === 'sqs') {
        const queue = queues.find(([, source]) => source.functionName === functionName);
        if (queue) sources.push({ functionName, handler, kind, queueId: queue[0], settings: queue[1] });
        else unserved.push({ functionName, event: kind, why: 'its queue is no resource of the stack' });
      } else if (kind === 'schedule') {
        const rate = rateSeconds(typeof settings === 'object' ? settings.rate : settings);
        if (rate === undefined)
          unserved.push({ functionName, event: kind, why: 'only rate(...) schedules run locally' });
        else sources.push({ functionName, handler, kind, rateSeconds: rate });
      } else unserved.push({ functionName, event: kind, why: 'npm start has no event source of this kind' });
    }
  }
  return { sources, unserved };
};
