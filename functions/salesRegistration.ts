import httpJsonBodyParser from '@middy/http-json-body-parser';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contentTypeGuard } from '../lib/http/contentTypeGuard.ts';
import { httpOperation } from '../lib/http/pipeline.ts';
import { rawBodyGuard } from '../lib/http/rawBodyGuard.ts';
import { salesRegistrationShape } from '../lib/http/shapes.ts';
import { salesRegistrationRequest } from '../lib/intake/salesRegistrationRequest.ts';

/** POST /erp/sales_registration */
export const handler = httpOperation(salesRegistrationShape)
  .use(callerIdentity())
  .use(contentTypeGuard({ allowed: ['application/json'] }))
  .use(rawBodyGuard({ maxBytes: 1024 * 1024 }))
  .use(httpJsonBodyParser())
  .handler(salesRegistrationRequest);
