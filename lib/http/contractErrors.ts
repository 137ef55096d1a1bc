import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorSummary, logger } from '../observability/logger.ts';
import { debugMode } from '../settings/settings.ts';
import { RequestRefusedError } from './errors.ts';
import type { ErrorShape } from './shapes.ts';
import { statusOf } from './statusOf.ts';

export interface ContractErrorsOptions {
  shape: ErrorShape;
}

/** The request id callers can quote: API Gateway's, else the Lambda invocation's. */
export const requestIdOf = (request: Pick<Request<APIGatewayProxyEvent>, 'event' | 'context'>): string =>
  request.event?.requestContext?.requestId ?? request.context?.awsRequestId ?? 'unknown';

/**
 * Errors from middy's own parsers, turned into refusals whose reasons a caller can act on; anything else is
 * left as it is.
 */
const fromMiddy = (error: unknown): RequestRefusedError | undefined => {
  const { statusCode, message, cause } = (error ?? {}) as {
    statusCode?: number;
    message?: string;
    cause?: unknown;
  };
  const origin = cause as { package?: string; data?: unknown } | undefined;
  if (!origin?.package?.startsWith('@middy/') || !statusCode || statusCode >= 500) return undefined;
  if (message === 'Forbidden key in JSON body') {
    return new RequestRefusedError(400, `body contains the forbidden key "${String(origin.data)}"`);
  }
  if (message === 'Invalid or malformed JSON was provided')
    return new RequestRefusedError(400, 'body is not valid JSON');
  return new RequestRefusedError(statusCode, message ?? 'request refused');
};

/** A refusal's reason: its message, which refusals (ours and the libraries' 4xx) keep free of the input. */
const reasonOf = (error: unknown): string => String((error as { message?: unknown } | null)?.message ?? '');

/**
 * Answers every error in the operation's contract shape, with the status lib/http/statusOf.ts gives it:
 * refusals (4xx) with their reason, anything else as 500 (or 503 when the error asks for a retry that way) with
 * the request id as reference and no stack trace unless in local debug mode. Nothing of the input is logged.
 *
 * @example
 * middy(handler).use(contractErrors({ shape: caseShape }))
 */
export const contractErrors = (
  opts: ContractErrorsOptions,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const error: unknown = fromMiddy(request.error) ?? request.error;
    const statusCode = statusOf(error);
    const reference = requestIdOf(request);
    if (statusCode < 500) {
      logger.info('request refused', { requestId: reference, statusCode });
      request.response = opts.shape.refused(statusCode, reasonOf(error));
      return;
    }
    logger.error('request failed', { requestId: reference, statusCode, ...errorSummary(error) });
    const stack = debugMode() ? (error as Error | null)?.stack : undefined;
    request.response = opts.shape.unexpected(statusCode, reference, stack);
  },
});
