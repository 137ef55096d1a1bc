import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contentTypeGuard } from '../lib/http/contentTypeGuard.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { rawBodyGuard } from '../lib/http/rawBodyGuard.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { salesRegistrationShape } from '../lib/http/shapes.ts';
import { salesRegistrationRequest } from '../lib/intake/salesRegistrationRequest.ts';
import { requestSpan } from '../lib/observability/requestSpan.ts';
import { traceFlush } from '../lib/observability/traceFlush.ts';

/**
 * POST /erp/sales_registration. Middlewares run `before` in this order and `after`/`onError` in the reverse
 * one: contractErrors shapes every error, then securityHeaders heads the answer, and traceFlush, last, sends the
 * request's spans (the request's own: requestSpan, joining a client's `traceparent`).
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(traceFlush())
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: salesRegistrationShape }))
  .use(callerIdentity())
  .use(contentTypeGuard({ allowed: ['application/json'] }))
  .use(rawBodyGuard({ maxBytes: 1024 * 1024 }))
  .use(httpJsonBodyParser())
  .handler(requestSpan('POST /erp/sales_registration', salesRegistrationRequest));
