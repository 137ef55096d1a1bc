/**
 * npm start's own trace collector (contract section 8: `npm start` keeps the spans itself): an OTLP/HTTP JSON
 * receiver on a free 127.0.0.1 port that appends every span it is sent to `<dataDir>/traces.jsonl`, one span a
 * line, so that they outlive a restart; `npm run records -- --trace <id>` reads them (tools/records/trace.ts).
 * A developer's own collector (OTEL_EXPORTER_OTLP_ENDPOINT set before npm start, e.g. Jaeger) replaces it.
 */
import { appendFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { KeptSpan } from '../lib/observability/keptSpans.ts';

/** The file the spans are kept in. */
export const tracesFile = (dataDir: string): string => join(dataDir, 'traces.jsonl');

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

/** OTLP/JSON ids are hex; an exporter writing them base64 (protobuf's JSON mapping) is read too. */
const hex = (id: string | undefined): string =>
  id === undefined || /^[0-9a-f]*$/.test(id) ? (id ?? '') : Buffer.from(id, 'base64').toString('hex');

const plainValue = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue;

const flatten = (attributes: OtlpAttributes): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, plainValue(value)]));

/** The spans of an OTLP/HTTP JSON export request, as kept. */
export const keptSpansOf = (body: {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: { spans?: Record<string, unknown>[] }[];
  }[];
}): KeptSpan[] =>
  (body.resourceSpans ?? []).flatMap((resource) => {
    const service = flatten(resource.resource?.attributes)['service.name'] as string | undefined;
    return (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: hex(span.traceId as string),
        spanId: hex(span.spanId as string),
        ...(span.parentSpanId ? { parentSpanId: hex(span.parentSpanId as string) } : {}),
        name: span.name as string,
        kind: span.kind as number,
        startTimeUnixNano: String(span.startTimeUnixNano),
        endTimeUnixNano: String(span.endTimeUnixNano),
        status: ((span.status as { code?: number } | undefined)?.code ?? 0) as number,
        attributes: flatten(span.attributes as OtlpAttributes),
        links: ((span.links ?? []) as { traceId: string; spanId: string }[]).map((link) => ({
          traceId: hex(link.traceId),
          spanId: hex(link.spanId),
        })),
        ...(service ? { service } : {}),
      })),
    );
  });

/**
 * Starts the receiver; `env` points the service's functions at it.
 *
 * @example
 * const traces = await startTraceReceiver({ dataDir });
 * // traces.env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:43117', TRACES_FILE: '.data/traces.jsonl' }
 */
export const startTraceReceiver = async (options: { dataDir: string }) => {
  const file = tracesFile(options.dataDir);
  // Appends one after the other: lines of two exports never interleave.
  let writing = Promise.resolve();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      let spans: KeptSpan[];
      try {
        spans = keptSpansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const lines = spans.map((span) => `${JSON.stringify(span)}\n`).join('');
      writing = writing.then(() => (lines ? appendFile(file, lines) : undefined)).catch(() => undefined);
      writing.then(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    file,
    // TRACES_FILE: where the console API reads a record's trace (lib/settings/settings.ts keptTracesFile).
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: url, TRACES_FILE: file },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
