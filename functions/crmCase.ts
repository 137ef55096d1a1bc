import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import httpUrlencodeBodyParser from '@middy/http-urlencode-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { clientsConfig } from '../lib/clients/clientsConfig.ts';
import type { ClientsConfig } from '../lib/clients/types.ts';
import { browserFormAnswers } from '../lib/forms/browserFormAnswers.ts';
import { browserFormControls } from '../lib/forms/browserFormControls.ts';
import { formCharset } from '../lib/forms/formCharset.ts';
import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { contentTypeGuard } from '../lib/http/contentTypeGuard.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';
import { rawBodyGuard } from '../lib/http/rawBodyGuard.ts';
import { securityHeaders } from '../lib/http/securityHeaders.ts';
import { caseShape } from '../lib/http/shapes.ts';
import { caseRequest } from '../lib/intake/caseRequest.ts';
import { requestSpan } from '../lib/observability/requestSpan.ts';
import { traceFlush } from '../lib/observability/traceFlush.ts';

const maxBytes = 64 * 1024;

/**
 * POST /crm/case, as JSON or as an HTML form, from clients with a key or (when configured) straight from web
 * pages of the allowed origins: forms in UTF-8, ISO-8859-1 or windows-1252, redirects to the form's pages,
 * the honeypot, CORS. `config` is config/clients.json unless a test gives another.
 *
 * Middlewares run `before` in this order and `after`/`onError` in the reverse one: contractErrors shapes every
 * error, securityHeaders heads the answer, browserFormAnswers redirects a browser form and adds CORS, and
 * traceFlush, last, sends the request's spans (requestSpan, joining a client's `traceparent`).
 */
export const crmCaseHandler = (config: ClientsConfig = clientsConfig) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(traceFlush())
    .use(browserFormAnswers({ config }))
    .use(httpHeaderNormalizer())
    .use(securityHeaders())
    .use(contractErrors({ shape: caseShape }))
    .use(callerIdentity({ allowBrowserForms: true, config }))
    .use(formCharset({ maxBytes }))
    .use(contentTypeGuard({ allowed: ['application/json', 'application/x-www-form-urlencoded'] }))
    .use(rawBodyGuard({ maxBytes }))
    .use(httpJsonBodyParser({ disableContentTypeError: true }))
    .use(httpUrlencodeBodyParser({ disableContentTypeError: true }))
    .use(browserFormControls({ config }))
    .handler(requestSpan('POST /crm/case', caseRequest));

export const handler = crmCaseHandler();
