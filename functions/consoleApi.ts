import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { consoleRequest } from '../lib/console/consoleRequest.ts';
import { consoleSession } from '../lib/console/consoleSession.ts';
import { consoleShape } from '../lib/console/errorShape.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { traceFlush } from '../lib/observability/traceFlush.ts';

/**
 * `/console/api/*`: the operations console's API (lib/console). Middlewares run `before` in this order and
 * `after`/`onError` in the reverse one: consoleSession refuses (401) any request without a valid ID token,
 * contractErrors shapes every error as `{"message"}`, then securityHeaders heads every answer (`no-store`, a CSP
 * with `frame-ancestors 'none'`). traceFlush, first so that it runs last, sends the spans an operator's action makes
 * (a redrive publishes the records' events, a resend posts a webhook) before the Lambda freezes.
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(traceFlush())
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: consoleShape }))
  .use(consoleSession())
  .handler((event, context) => consoleRequest(event, context));
