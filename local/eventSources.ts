/**
 * The worker's SQS event sources as serverless.yml declares them (`osls print`): the local poller receives and
 * invokes with the same batch size and batching window that AWS's event source mapping uses.
 */
import type { ResolvedServerlessConfig } from './serverlessConfig.ts';

/** One queue's event source settings. */
export interface EventSourceSettings {
  /** The function it invokes (serverless.yml's name, e.g. `erpDelivery`). */
  functionName: string;
  /** That function's handler, as serverless.yml names it (e.g. `functions/deliveryWorker.handler`). */
  handler: string;
  /** Messages per invocation at most (`batchSize`). */
  batchSize: number;
  /** Seconds to gather a batch after its first message (`maximumBatchingWindow`; 0 when absent). */
  batchingWindowSeconds: number;
  /** Concurrent invocations at most (`maximumConcurrency`), when set. */
  maximumConcurrency?: number;
}

type SqsEvent = {
  sqs?: {
    arn?: { 'Fn::GetAtt'?: [string, string] } | string;
    batchSize?: number | string;
    maximumBatchingWindow?: number | string;
    maximumConcurrency?: number | string;
  };
};

const whole = (name: string, value: unknown, fallback: number): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(
      `serverless.yml: sqs event ${name} must be a whole number of at least 0, got ${String(value)}`,
    );
  return parsed;
};

/**
 * The SQS event sources of the resolved serverless.yml, by the logical id of the queue they read (AWS's defaults:
 * batch size 10, no window).
 *
 * @example
 * eventSourcesOf(config).CaseQueue // { functionName: 'crmDelivery', handler: 'functions/deliveryWorker.handler', batchSize: 200, batchingWindowSeconds: 1, maximumConcurrency: 2 }
 */
export const eventSourcesOf = (config: ResolvedServerlessConfig): Record<string, EventSourceSettings> => {
  const sources: Record<string, EventSourceSettings> = {};
  for (const [functionName, fn] of Object.entries(config.functions ?? {})) {
    for (const event of (fn.events ?? []) as SqsEvent[]) {
      const arn = event.sqs?.arn;
      const queueId = typeof arn === 'object' ? arn['Fn::GetAtt']?.[0] : undefined;
      if (!event.sqs || !queueId) continue;
      const concurrency = event.sqs.maximumConcurrency;
      if (!fn.handler) throw new Error(`serverless.yml: function ${functionName} has no handler`);
      sources[queueId] = {
        functionName,
        handler: fn.handler,
        batchSize: whole('batchSize', event.sqs.batchSize, 10),
        batchingWindowSeconds: whole('maximumBatchingWindow', event.sqs.maximumBatchingWindow, 0),
        ...(concurrency === undefined
          ? {}
          : { maximumConcurrency: whole('maximumConcurrency', concurrency, 0) }),
      };
    }
  }
  return sources;
};

/**
 * The SQS event source of one function of the resolved serverless.yml; throws, naming it, when it has none.
 *
 * @example
 * eventSourceOfFunction(config, 'erpDelivery').batchingWindowSeconds // 1
 */
export const eventSourceOfFunction = (
  config: ResolvedServerlessConfig,
  functionName: string,
): EventSourceSettings => {
  const source = Object.values(eventSourcesOf(config)).find((each) => each.functionName === functionName);
  if (!source) throw new Error(`serverless.yml has no SQS event source for ${functionName}`);
  return source;
};
