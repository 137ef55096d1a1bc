import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { salesRegistrationShape, statusShape } from '../lib/http/shapes.ts';
import { frameRequest } from '../lib/status/frameRequest.ts';
import { statusRequest } from '../lib/status/statusRequest.ts';

/**
 * GET /erp/sales_registration/{id} and GET /crm/case/{CrmId}. Middlewares run `before` in this order and
 * `after`/`onError` in the reverse one: contractErrors shapes every error, then securityHeaders heads the answer.
 */
const byId = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: statusShape }))
  .use(callerIdentity())
  .handler(statusRequest);

/** GET /erp/sales_registration?FrameNum=…: the same chain, errors in the sales operation's shape. */
const byFrame = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpHeaderNormalizer())
  .use(securityHeaders())
  .use(contractErrors({ shape: salesRegistrationShape }))
  .use(callerIdentity())
  .handler(frameRequest);

/** Every status look-up: by id when the path names one, else by frame number (the sales collection's GET). */
export const handler = (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> =>
  event.pathParameters?.id !== undefined || event.pathParameters?.CrmId !== undefined
    ? byId(event, context)
    : byFrame(event, context);
