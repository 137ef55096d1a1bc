import type { APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { nanosToMs, type TraceEntry, traceStart, traceTree } from '../observability/keptSpans.ts';
import { traceIdOf } from '../observability/traceContext.ts';
import { recordStateOr404 } from './recordRequest.ts';
import type { TraceRow } from './traceRow.ts';
import { type TraceSource, traceSource } from './traceSource.ts';

export type { TraceRow } from './traceRow.ts';

/**
 * The rows of a trace in drawing order. Only names, times and statuses: a span's other attributes (record ids,
 * counts) are not shown, and none carries personal data.
 */
export const traceRows = (entries: readonly TraceEntry[]): TraceRow[] => {
  const start = traceStart(entries);
  return traceTree(entries).map(({ span, linked, depth }) => {
    const began = BigInt(span.startTimeUnixNano);
    const code = span.attributes['http.response.status_code'];
    return {
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      name: span.name,
      startMs: nanosToMs(began - start),
      durationMs: nanosToMs(BigInt(span.endTimeUnixNano) - began),
      status: span.status === 2 ? 'error' : 'ok',
      ...(typeof code === 'number' ? { statusCode: code } : {}),
      linked,
      depth,
    };
  });
};

/**
 * `GET /console/api/records/{id}/trace`: the record's trace (its id from the status record's `traceparent`) with the
 * batched calls linked to it, as waterfall rows. 404 for an unknown record, one accepted before tracing, or where no
 * spans are kept (AWS: the message names the trace id to open in CloudWatch).
 *
 * @example
 * await traceAnswer('3f0c…') // 200 {"traceId":"4bf9…","spans":[{"spanId":"00f0…","name":"POST /erp/sales_registration","startMs":0,…}]}
 */
export const traceAnswer = async (
  id: string,
  source: TraceSource | undefined = traceSource(),
): Promise<APIGatewayProxyResult> => {
  const status = await recordStateOr404(id);
  const traceId = traceIdOf(status.traceparent);
  if (!traceId)
    throw new RequestRefusedError(404, 'this record was accepted before tracing: it has no trace');
  if (!source)
    throw new RequestRefusedError(
      404,
      `traces are kept by npm start only: open trace ${traceId} in CloudWatch (X-Ray traces)`,
    );
  return jsonResponse(200, { traceId, spans: traceRows(await source.spansOf(traceId)) });
};
