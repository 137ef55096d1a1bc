import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { contractErrors } from './contractErrors.ts';
import { securityHeaders } from './securityHeaders.ts';
import type { ErrorShape } from './shapes.ts';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The middleware every HTTP operation starts with: lower-case header names, answers in the operation's
 * contract shapes for every error, and the security headers on every answer. Operation-specific guards and
 * parsers are added by the caller.
 *
 * Order matters: middy runs `after` and `onError` in reverse order of `use`, so contractErrors (used last here)
 * turns an error into the contract's answer first, and securityHeaders then adds its headers to that answer as
 * to every success.
 *
 * @example
 * export const handler = httpOperation(caseShape).use(contentTypeGuard()).handler(handleCase);
 */
export const httpOperation = (shape: ErrorShape) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpHeaderNormalizer())
    .use(securityHeaders())
    .use(contractErrors({ shape }));
