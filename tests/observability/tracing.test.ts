/**
 * The tracing module (lib/observability/tracing.ts) and its flush (traceFlush.ts): spans go by OTLP/HTTP JSON to
 * OTEL_EXPORTER_OTLP_ENDPOINT, all of them before a handler returns (a frozen Lambda sends nothing later); a
 * setting turns export off; a request's `traceparent` is joined; every log line names the active span.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../lib/observability/logger.ts';
import { requestSpan } from '../../lib/observability/requestSpan.ts';
import { traceFlush } from '../../lib/observability/traceFlush.ts';
import { inSpan, tracedFetch, traceIdOf, traceparentOf } from '../../lib/observability/tracing.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { tracesExport } from '../../lib/settings/settings.ts';
import { outputDuring } from '../../testkit/emittedOutput.ts';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  status?: { code?: number };
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** A collector: what OTLP/HTTP JSON posts to /v1/traces, span by span. */
const received: ReceivedSpan[] = [];
let collector: Server;
let endpoint: string;

const spansNamed = (name: string) => received.filter((span) => span.name === name);

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resource of body.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) received.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => collector.close(resolve));
});

const withEnvironment = (values: Record<string, string | undefined>) => {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetSettings();
};

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-00f067aa0ba902b7-01`;

const event = (headers: Record<string, string>) =>
  ({ headers, body: null }) as unknown as APIGatewayProxyEvent;

describe('export', () => {
  it('sends every span of an invocation to the collector before the handler returns', async () => {
    // Prepare
    withEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACES_EXPORT: undefined });
    const handler = middy()
      .use(traceFlush())
      .handler(async () => {
        await inSpan('first hop', {}, async () => {});
        await inSpan('second hop', {}, async () => {});
        return 'done';
      });
    // Act
    await handler({}, {} as never);
    // Assess: already there, not a timer's second later
    expect(spansNamed('first hop')).toHaveLength(1);
    expect(spansNamed('second hop')).toHaveLength(1);
  });

  it('sends them when the handler fails too', async () => {
    // Prepare
    withEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACES_EXPORT: undefined });
    const handler = middy()
      .use(traceFlush())
      .handler(async () => inSpan('failing hop', {}, async () => Promise.reject(new TypeError('boom'))));
    // Act
    await expect(handler({}, {} as never)).rejects.toThrow('boom');
    // Assess
    const [span] = spansNamed('failing hop');
    expect(span.status?.code).toBe(2);
  });

  it('sends nothing with TRACES_EXPORT=off, and nothing without an endpoint', async () => {
    // Prepare
    withEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACES_EXPORT: 'off' });
    const handler = middy()
      .use(traceFlush())
      .handler(async () => inSpan('unexported hop', {}, async () => traceparentOf()));
    // Act
    const traceparent = await handler({}, {} as never);
    // Assess: the span was made (its context propagates), not sent
    expect(traceIdOf(traceparent)).toMatch(/^[0-9a-f]{32}$/);
    expect(spansNamed('unexported hop')).toEqual([]);
    expect(tracesExport({})).toBeUndefined();
    expect(tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/` })).toEqual({
      url: `${endpoint}/v1/traces`,
    });
  });
});

describe('context', () => {
  it("joins a request's traceparent, and starts a trace without one", async () => {
    // Prepare
    withEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACES_EXPORT: undefined });
    const seen: (string | undefined)[] = [];
    const handler = requestSpan('POST /test', async () => {
      seen.push(traceparentOf());
      return { statusCode: 200, body: '' };
    });
    // Act
    await handler(event({ Traceparent: CLIENT_TRACEPARENT }), {});
    await handler(event({}), {});
    await handler(event({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' }), {});
    // Assess
    expect(traceIdOf(seen[0])).toBe(CLIENT_TRACE);
    expect(traceIdOf(seen[1])).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(seen[1])).not.toBe(CLIENT_TRACE);
    expect(traceIdOf(seen[2])).not.toBe('00000000000000000000000000000000');
  });

  it("puts the active span's traceparent on outgoing requests", async () => {
    // Prepare
    withEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACES_EXPORT: undefined });
    let header: string | undefined;
    const target = createServer((request, response) => {
      header = request.headers.traceparent as string | undefined;
      response.writeHead(503).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
    // Act
    const status = await inSpan(
      'caller',
      { parent: CLIENT_TRACEPARENT },
      async () => (await tracedFetch('downstream GET', url)).status,
    );
    await new Promise((resolve) => target.close(resolve));
    // Assess
    expect(status).toBe(503);
    expect(traceIdOf(header)).toBe(CLIENT_TRACE);
  });
});

describe('logs', () => {
  it('every line written under a span names its traceId and spanId; none outside one', async () => {
    // Prepare
    withEnvironment({ TRACES_EXPORT: 'off' });
    // Act
    const { logs } = await outputDuring(async () => {
      await inSpan('logging hop', { parent: CLIENT_TRACEPARENT }, async () => {
        logger.info('inside a span', { recordId: 'r1' });
      });
      logger.info('outside any span');
    });
    // Assess
    const inside = logs.find((line) => line.message === 'inside a span');
    const outside = logs.find((line) => line.message === 'outside any span');
    expect(inside?.traceId).toBe(CLIENT_TRACE);
    expect(inside?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(inside?.spanId).not.toBe('00f067aa0ba902b7');
    expect(outside?.traceId).toBeUndefined();
  });
});
