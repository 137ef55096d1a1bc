import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export interface SecurityHeadersOptions {
  /** Header name (lower case) to value; a value of `false` leaves that header out. */
  headers: Record<string, string | false>;
}

/**
 * The headers every answer of the API carries. The answers are JSON or plain text for programs, never a page:
 * nothing may sniff them into HTML, frame them, cache them (they carry record ids), or leak the URL onward.
 */
export const securityHeaderDefaults: SecurityHeadersOptions = {
  headers: {
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
    'strict-transport-security': 'max-age=31536000',
  },
};

/**
 * Adds the security headers to every answer: successes (`after`) and the error answers other middlewares
 * built (`onError`). They replace a header of the same name in any case, so the policy holds whatever a
 * handler set. To cover error answers, use it *before* contractErrors: middy runs `onError` in reverse order
 * of `use`, so contractErrors builds the answer first and this then adds the headers. (A `before` that returns
 * an early response skips every `after`; no middleware of the operations does, they throw RequestRefusedError.)
 *
 * @example
 * middy(handler).use(securityHeaders()).use(contractErrors({ shape }))
 * middy(handler).use(securityHeaders({ headers: { 'x-frame-options': false } }))
 */
export const securityHeaders = (
  opts: Partial<SecurityHeadersOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  const headers = Object.entries({ ...securityHeaderDefaults.headers, ...opts.headers });
  const names = new Set(headers.map(([name]) => name));
  const apply = (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult>) => {
    const response = request.response;
    if (!response) return;
    const kept = Object.entries(response.headers ?? {}).filter(([name]) => !names.has(name.toLowerCase()));
    response.headers = Object.fromEntries([
      ...kept,
      ...headers.filter((entry): entry is [string, string] => entry[1] !== false),
    ]);
  };
  return { after: apply, onError: apply };
};
