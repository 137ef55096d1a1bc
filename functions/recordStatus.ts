import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { statusShape } from '../lib/http/shapes.ts';
import { statusRequest } from '../lib/status/statusRequest.ts';

/**
 * GET /erp/sales_registration/{id} and GET /crm/case/{CrmId}. Middlewares run `before` in this order and
 * `after`/`onError` in the reverse one: contractErrors shapes every error, then securityHeaders heads the answer.
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: statusShape }))
  .use(callerIdentity())
  .handler(statusRequest);
