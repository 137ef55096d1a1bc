import type { MiddlewareObj } from '@middy/core';
import { flushSpans } from './tracing.ts';

export interface TraceFlushOptions {
  /** Sends the spans ended so far (lib/observability/tracing.ts flushSpans; tests give their own). */
  flush: () => Promise<void>;
}

export const traceFlushDefaults: TraceFlushOptions = { flush: flushSpans };

/**
 * Sends the invocation's spans before the handler's answer goes out, after a success and after an error alike: a
 * Lambda is frozen the moment it returns, and a span still in a buffer then is lost (or sent minutes late, from the
 * next invocation). Use it first, so that its `after` and `onError` run last, once every other middleware's spans
 * have ended. A failed export never fails the invocation.
 *
 * @example
 * middy().use(traceFlush()).use(httpHeaderNormalizer()).handler(handler);
 */
export const traceFlush = (options: Partial<TraceFlushOptions> = {}): MiddlewareObj => {
  const { flush } = { ...traceFlushDefaults, ...options };
  const flushed = async (): Promise<void> => {
    await flush().catch(() => undefined);
  };
  return { after: flushed, onError: flushed };
};
