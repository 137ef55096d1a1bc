import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { contractErrors } from './contractErrors.ts';
import type { ErrorShape } from './shapes.ts';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The middleware every HTTP operation starts with: lower-case header names and answers in the
 * operation's contract shapes for every error. Operation-specific guards and parsers are added by the caller.
 *
 * @example
 * export const handler = httpOperation(caseShape).use(contentTypeGuard()).handler(handleCase);
 */
export const httpOperation = (shape: ErrorShape) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpHeaderNormalizer())
    .use(contractErrors({ shape }));
