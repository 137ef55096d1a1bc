import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorSummary, logger } from '../observability/logger.ts';
import { debugMode } from '../settings/settings.ts';
import { RequestRefused } from './errors.ts';
import type { ErrorShape } from './shapes.ts';

export interface ContractErrorsOptions {
  shape: ErrorShape;
}

/** The request id callers can quote: API Gateway's, else the Lambda invocation's. */
export const requestIdOf = (request: Pick<Request<APIGatewayProxyEvent>, 'event' | 'context'>): string =>
  request.event?.requestContext?.requestId ?? request.context?.awsRequestId ?? 'unknown';

/** Errors from middy's own parsers, turned into reasons a caller can act on. */
const fromMiddy = (error: {
  statusCode?: number;
  message?: string;
  cause?: unknown;
}): RequestRefused | undefined => {
  const cause = error.cause as { package?: string; data?: unknown } | undefined;
  if (!cause?.package?.startsWith('@middy/') || !error.statusCode || error.statusCode >= 500)
    return undefined;
  if (error.message === 'Forbidden key in JSON body') {
    return new RequestRefused(400, `body contains the forbidden key "${String(cause.data)}"`);
  }
  if (error.message === 'Invalid or malformed JSON was provided')
    return new RequestRefused(400, 'body is not valid JSON');
  return new RequestRefused(error.statusCode, error.message ?? 'request refused');
};

/**
 * Answers every error in the operation's contract shape: refusals (4xx) with their reason, anything else as
 * 500 (or 503 when the error says so) with the request id as reference and no stack trace unless in local
 * debug mode. Nothing of the input is logged.
 *
 * @example
 * middy(handler).use(contractErrors({ shape: caseShape }))
 */
export const contractErrors = (
  opts: ContractErrorsOptions,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const error = request.error as (Error & { statusCode?: number }) | null;
    // Our own refusals and middy's carry a status below 500 and a message that is safe to return.
    const refused =
      error instanceof RequestRefused
        ? error
        : error?.statusCode && error.statusCode < 500
          ? (fromMiddy(error) ?? new RequestRefused(error.statusCode, error.message))
          : undefined;
    const reference = requestIdOf(request);
    if (refused) {
      logger.info('request refused', { requestId: reference, statusCode: refused.statusCode });
      request.response = opts.shape.refused(refused.statusCode, refused.message);
      return;
    }
    const statusCode = error?.statusCode === 503 ? 503 : 500;
    logger.error('request failed', { requestId: reference, statusCode, ...errorSummary(error) });
    request.response = opts.shape.unexpected(statusCode, reference, debugMode() ? error?.stack : undefined);
  },
});
