import type { MiddlewareObj, Request } from '@middy/core';
import httpSecurityHeaders from '@middy/http-security-headers';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export interface SecurityHeadersOptions {
  /** Header name (lower case) to value, over the policy; a value of `false` leaves that header out. */
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
 * @middy/http-security-headers configured to exactly the policy above (tests/hostile/securityHeaders.test.ts
 * compares): its page-oriented defaults (permissions, cross-origin isolation, reporting, a CSP for documents) are
 * off, since no answer of the API is a page. `Cache-Control` is not one of its headers, and its CSP cannot be the
 * API's: both set below.
 */
const maintained = httpSecurityHeaders({
  // Its CSP always adds document directives (`sandbox`, `upgrade-insecure-requests`) that its options cannot turn
  // off: the API's own, for answers that are no documents, is set below.
  contentSecurityPolicy: false,
  contentTypeOptions: { action: 'nosniff' },
  frameOptions: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: false, preload: false },
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  dnsPrefetchControl: false,
  downloadOptions: false,
  originAgentCluster: false,
  permissionsPolicy: false,
  permittedCrossDomainPolicies: false,
  reportTo: false,
  reportingEndpoints: false,
  xssProtection: false,
  poweredBy: false,
});

/**
 * Adds the security headers to every answer: successes (`after`) and the error answers other middlewares built
 * (`onError`), through @middy/http-security-headers; then `Cache-Control`, which it does not set, and the caller's
 * options. Names come out in lower case, as every other header of the API, and replace a header of the same name in
 * any case, so the policy holds whatever a handler set. To cover error answers, use it *before* contractErrors: middy
 * runs `onError` in reverse order of `use`, so contractErrors builds the answer first and this then adds the headers.
 *
 * @example
 * middy(handler).use(securityHeaders()).use(contractErrors({ shape }))
 * middy(handler).use(securityHeaders({ headers: { 'x-frame-options': false } }))
 */
export const securityHeaders = (
  opts: Partial<SecurityHeadersOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  const { 'cache-control': cacheControl, 'content-security-policy': csp } = securityHeaderDefaults.headers;
  const overrides = { 'cache-control': cacheControl, 'content-security-policy': csp, ...opts.headers };
  const apply = (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult>) => {
    if (!request.response) return;
    const handlerSet = Object.entries(request.response.headers ?? {});
    request.response.headers = {};
    maintained.after?.(request as never);
    const policy = Object.entries(request.response.headers ?? {}).map(([name, value]) => [
      name.toLowerCase(),
      value,
    ]);
    const named = new Set([...policy.map(([name]) => name), ...Object.keys(overrides)]);
    const headers: Record<string, string | number | boolean> = Object.fromEntries([
      ...handlerSet.filter(([name]) => !named.has(name.toLowerCase())),
      ...policy,
    ]);
    for (const [name, value] of Object.entries(overrides)) {
      if (value === false) delete headers[name];
      else headers[name] = value;
    }
    request.response.headers = headers;
  };
  return { after: apply, onError: apply };
};
