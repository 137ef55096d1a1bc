import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { metricsIdentity, type TracesTarget, tracesExport } from '../settings/settings.ts';
import { TRACEPARENT } from './traceContext.ts';

export { traceIdOf } from './traceContext.ts';

/*
 * The one place that sets up tracing (contract section 8): the OpenTelemetry API and SDK, registered when this
 * module is first imported (a Lambda's init), W3C Trace Context as the propagator, AsyncLocalStorage carrying the
 * active span across awaits. Spans are exported by OTLP/HTTP (JSON) where lib/settings/settings.ts tracesExport says:
 * to OTEL_EXPORTER_OTLP_ENDPOINT, or on AWS (TRACES_EXPORT=xray) to X-Ray's OTLP endpoint, signed
 * (lib/observability/xraySpanExporter.ts); nothing with TRACES_EXPORT=off. The exporter is loaded only when the
 * first span ends, so a function that exports nothing pays for none of it at cold start. Handlers flush before they return (lib/observability/traceFlush.ts): a frozen Lambda
 * sends nothing. Handlers and adapters use the helpers below, never the SDK itself.
 */

/** Processors added after start-up (tests watch the spans ended; the provider's own list is fixed). */
const watchers = new Set<SpanProcessor>();

/** The exporting processor once loaded. */
let exported: SpanProcessor | undefined;
/** Its loading, started by the first span ended while export is on. */
let exporting: Promise<SpanProcessor> | undefined;
/** Spans ended before the exporter was loaded: handed to it once it is. */
let early: ReadableSpan[] = [];

/** The exporter of a target: X-Ray's signed one (TRACES_EXPORT=xray) or the OTLP/HTTP JSON one, each a chunk of its own. */
const exporterFor = async (target: TracesTarget): Promise<SpanExporter> => {
  if (target.xrayRegion) {
    const { XRaySpanExporter } = await import('./xraySpanExporter.ts');
    return new XRaySpanExporter({ url: target.url, region: target.xrayRegion });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url: target.url });
};

const loadExporter = (target: TracesTarget): Promise<SpanProcessor> => {
  exporting ??= exporterFor(target).then((exporter) => {
    const processor = new BatchSpanProcessor({
      exporter,
      // Flushed by the handler before it returns; the timer only matters to a long-lived process (npm start).
      scheduledDelayMillis: 1000,
      maxQueueSize: 8192,
      maxExportBatchSize: 512,
    });
    // Set before the early spans are handed over, in the same turn: no span ends in between.
    exported = processor;
    for (const span of early) processor.onEnd(span);
    early = [];
    return processor;
  });
  return exporting;
};

/** Where the spans go: the exporter (when export is on) and the watchers. */
const processor: SpanProcessor = {
  onStart: () => {},
  onEnd: (span) => {
    const target = tracesExport();
    if (target) {
      if (exported) exported.onEnd(span);
      else {
        early.push(span);
        void loadExporter(target);
      }
    }
    for (const watcher of watchers) watcher.onEnd(span);
  },
  forceFlush: async () => {
    if (exporting) await (await exporting).forceFlush();
    await Promise.all([...watchers].map((watcher) => watcher.forceFlush()));
  },
  shutdown: async () => {},
};

const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': metricsIdentity().service }),
  spanProcessors: [processor],
});
trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const tracer = trace.getTracer('dealer-gateway');

/**
 * Adds a processor that sees every span ended (tests keep them in memory); returns its removal.
 *
 * @example
 * const exporter = new InMemorySpanExporter(); const stop = watchSpans(new SimpleSpanProcessor(exporter));
 */
export const watchSpans = (watcher: SpanProcessor): (() => void) => {
  watchers.add(watcher);
  return () => watchers.delete(watcher);
};

/** Sends every span ended so far; awaited before a handler returns, so that none is lost when the Lambda freezes. */
export const flushSpans = async (): Promise<void> => {
  await provider.forceFlush();
};

/** A `traceparent` (or headers holding one, in any case) as a context; an invalid or missing one: no parent. */
export const contextOf = (traceparent: string | undefined | null): Context =>
  traceparent ? propagation.extract(ROOT_CONTEXT, { [TRACEPARENT]: traceparent }) : ROOT_CONTEXT;

/** The `traceparent` of a context (the active one by default): undefined when it holds no valid span. */
export const traceparentOf = (of: Context = context.active()): string | undefined => {
  const carrier: Record<string, string> = {};
  propagation.inject(of, carrier);
  return carrier[TRACEPARENT];
};

/** The `traceparent` of a span. */
export const traceparentOfSpan = (span: Span): string | undefined =>
  traceparentOf(trace.setSpan(ROOT_CONTEXT, span));

/** The ids of the active span, for log lines; empty when there is none. */
export const activeTraceIds = (): { traceId?: string; spanId?: string } => {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { traceId: spanContext.traceId, spanId: spanContext.spanId };
};

/**
 * The parent for work about a record: the active span when one is (the worker's attempt), else the record's own
 * trace context (the reconciler publishing a record's late events), so that it is a span of the record's trace.
 */
export const recordParent = (traceparent: string | undefined): Context | string | undefined =>
  trace.getActiveSpan() ? context.active() : traceparent;

/** Headers with the active context's `traceparent` added (unchanged when none is active). */
export const withTraceparent = <H extends Record<string, string>>(headers: H): H => {
  const traceparent = traceparentOf();
  return traceparent ? { ...headers, [TRACEPARENT]: traceparent } : headers;
};

/** How a span is started: its parent (a context or a `traceparent`; else the active span), links, kind. */
export interface SpanOptions {
  parent?: Context | string;
  /** A new trace, whatever is active (a batched call: its records are its links, none its parent). */
  root?: true;
  /** Spans this one is linked to (a batched call carries many records: one link each, no parent among them). */
  links?: (string | undefined)[];
  kind?: 'server' | 'client' | 'producer' | 'consumer' | 'internal';
  attributes?: Attributes;
}

const KINDS = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
} as const;

const linkOf = (traceparent: string | undefined): Link | undefined => {
  if (!traceparent) return undefined;
  const spanContext = trace.getSpanContext(contextOf(traceparent));
  return spanContext && trace.isSpanContextValid(spanContext) ? { context: spanContext } : undefined;
};

const parentOf = (parent: Context | string | undefined): Context =>
  parent === undefined ? context.active() : typeof parent === 'string' ? contextOf(parent) : parent;

/**
 * Starts a span without making it active (for spans that outlive a call: one per record of a batch).
 *
 * @example
 * const span = startSpan('deliver record', { parent: status.traceparent, kind: 'consumer' });
 */
export const startSpan = (name: string, options: SpanOptions = {}): Span =>
  tracer.startSpan(
    name,
    {
      kind: KINDS[options.kind ?? 'internal'],
      attributes: options.attributes,
      links: (options.links ?? []).map(linkOf).filter((link) => link !== undefined),
    },
    options.root ? ROOT_CONTEXT : parentOf(options.parent),
  );

/**
 * Marks a span as failed: status ERROR, what failed (`error.type`: an error's name or an outcome's kind, never a
 * message, which may echo personal data) and the downstream's HTTP status when there is one.
 *
 * @example
 * failSpan(attemptSpan, 'transient', 503);
 */
export const failSpan = (span: Span, errorType: string, httpStatus?: number): void => {
  if (httpStatus !== undefined) span.setAttribute('http.response.status_code', httpStatus);
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
};

/**
 * Runs `work` in a new active span, ended when it settles; a throw marks it failed (and is rethrown).
 *
 * @example
 * const answer = await inSpan('POST /erp/sales_registration', { parent: event.headers.traceparent, kind: 'server' }, () => handle(event));
 */
export const inSpan = async <T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> => {
  const span = startSpan(name, options);
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(span));
  } catch (error) {
    failSpan(span, error instanceof Error ? error.name : typeof error);
    throw error;
  } finally {
    span.end();
  }
};

/** Runs `work` with `span` active (its downstream calls and log lines belong to it). */
export const withActiveSpan = <T>(span: Span, work: () => T): T =>
  context.with(trace.setSpan(context.active(), span), work);

export type { Span };

/** The last HTTP status each span's requests were answered (a failed attempt's span carries its downstream's). */
const answeredWith = new WeakMap<Span, number>();

/** The status the last request made under `span` was answered with, if any. */
export const lastHttpStatus = (span: Span): number | undefined => answeredWith.get(span);

/**
 * `fetch` as every outgoing request of the service makes it (SAP, Salesforce, their token and CSRF fetches, the
 * webhook posts): a client span, child of the active one, whose `traceparent` the request carries, with the
 * answer's status; the span it was made under remembers that status ({@link lastHttpStatus}). Throws as fetch does.
 *
 * @example
 * const response = await tracedFetch('SAP $batch', url, { method: 'POST', headers, body });
 */
export const tracedFetch = async (
  name: string,
  url: string | URL,
  init: RequestInit = {},
): Promise<Response> => {
  const caller = trace.getActiveSpan();
  return inSpan(
    name,
    { kind: 'client', attributes: { 'http.request.method': init.method ?? 'GET' } },
    async (span) => {
      const headers = new Headers(init.headers);
      const traceparent = traceparentOf();
      if (traceparent) headers.set(TRACEPARENT, traceparent);
      const response = await fetch(url, { ...init, headers });
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (caller) answeredWith.set(caller, response.status);
      return response;
    },
  );
};
