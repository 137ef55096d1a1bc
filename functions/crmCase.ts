import httpJsonBodyParser from '@middy/http-json-body-parser';
import httpUrlencodeBodyParser from '@middy/http-urlencode-body-parser';
import { bodySizeGuard } from '../lib/http/bodySizeGuard.ts';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contentTypeGuard } from '../lib/http/contentTypeGuard.ts';
import { httpOperation } from '../lib/http/pipeline.ts';
import { caseShape } from '../lib/http/shapes.ts';
import { caseRequest } from '../lib/intake/caseRequest.ts';

/** POST /crm/case, as JSON or as an HTML form. */
export const handler = httpOperation(caseShape)
  .use(callerIdentity({ allowBrowserForms: true }))
  .use(contentTypeGuard({ allowed: ['application/json', 'application/x-www-form-urlencoded'] }))
  .use(bodySizeGuard({ maxBytes: 64 * 1024 }))
  .use(httpJsonBodyParser({ disableContentTypeError: true }))
  .use(httpUrlencodeBodyParser({ disableContentTypeError: true }))
  .handler(caseRequest);
