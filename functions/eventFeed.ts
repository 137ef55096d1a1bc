import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { feedRequest } from '../lib/feed/feedRequest.ts';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { statusShape } from '../lib/http/shapes.ts';

/**
 * GET /events: the caller's event feed. The status look-ups' chain: contractErrors answers every error as
 * `{"message"}`, callerIdentity lets in API keys only (a browser form has no feed).
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: statusShape }))
  .use(callerIdentity())
  .handler((event, context) => feedRequest(event, context));
