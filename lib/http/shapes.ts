import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse, textResponse } from './responses.ts';

/** How one operation answers what went wrong, in the contract's shapes. */
export interface ErrorShape {
  /** 4xx: the request was refused for a reason the caller can fix. */
  refused(statusCode: number, reason: string): APIGatewayProxyResult;
  /** 5xx: something on our side; `reference` is the request id, `stack` only in local debug mode. */
  unexpected(statusCode: number, reference: string, stack?: string): APIGatewayProxyResult;
}

/** Seconds a caller should wait before retrying after 503. */
export const RETRY_AFTER_SECONDS = 5;

const retryAfter = (statusCode: number): Record<string, string> =>
  statusCode === 503 ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {};

export const unexpectedErrorText = (reference: string) =>
  `An unexpected error has occurred. Please contact the web services team with the query settings. Reference: ${reference}`;

/** `erp/sales_registration`: `{success: false, message}`; 5xx as the old service's plain text. */
export const salesRegistrationShape: ErrorShape = {
  refused: (statusCode, reason) => jsonResponse(statusCode, { success: false, message: reason }),
  unexpected: (statusCode, reference, stack) =>
    textResponse(
      statusCode,
      stack ? `${unexpectedErrorText(reference)}\n${stack}` : unexpectedErrorText(reference),
      retryAfter(statusCode),
    ),
};

/** `crm/case`: a JSON string `"Create Case failed: …"`; 5xx as `{error, details, stackTrace}`. */
export const caseShape: ErrorShape = {
  refused: (statusCode, reason) => jsonResponse(statusCode, `Create Case failed: ${reason}`),
  unexpected: (statusCode, reference, stack) =>
    jsonResponse(
      statusCode,
      {
        error: 'An unexpected error occurred',
        details: `${statusCode === 503 ? 'The service is briefly unavailable; please retry.' : 'Please contact the web services team.'} Reference: ${reference}`,
        stackTrace: stack ?? '',
      },
      retryAfter(statusCode),
    ),
};

/** Status look-ups: `{message}`. */
export const statusShape: ErrorShape = {
  refused: (statusCode, reason) => jsonResponse(statusCode, { message: reason }),
  unexpected: (statusCode, reference) =>
    jsonResponse(
      statusCode,
      { message: `An unexpected error occurred. Reference: ${reference}` },
      retryAfter(statusCode),
    ),
};
