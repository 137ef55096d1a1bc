import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { TRACEPARENT } from './traceContext.ts';
import { inSpan } from './tracing.ts';

/** A request's `traceparent` header, in whatever case its client wrote it. */
const traceparentHeader = (event: APIGatewayProxyEvent): string | undefined => {
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (name.toLowerCase() === TRACEPARENT && value) return value;
  return undefined;
};

/**
 * Runs an HTTP handler in its request's server span (contract section 8): a child of the request's valid
 * `traceparent` (the client's trace), else the first span of a new trace. Records the request accepts keep this
 * span's context (lib/intake/acceptRecords.ts). The answer's status is the span's; a thrown error marks it failed.
 *
 * @example
 * middy().use(traceFlush()).handler(requestSpan('POST /erp/sales_registration', salesRegistrationRequest));
 */
export const requestSpan =
  <C>(name: string, handler: (event: APIGatewayProxyEvent, context: C) => Promise<APIGatewayProxyResult>) =>
  (event: APIGatewayProxyEvent, context: C): Promise<APIGatewayProxyResult> =>
    inSpan(name, { parent: traceparentHeader(event), kind: 'server' }, async (span) => {
      const answer = await handler(event, context);
      span.setAttribute('http.response.status_code', answer.statusCode);
      return answer;
    });
