/**
 * The one place an error becomes an HTTP status. The product's errors carry a code (lib/errors.ts), not a
 * status: what a code means to a caller is the edge's business, so it is decided here, for every operation alike.
 */
import { type ErrorCode, GatewayError } from '../errors.ts';
import { RequestRefusedError } from './errors.ts';

/**
 * The status of each code a caller is answered with other than 500. A code not listed is a fault of ours (500):
 * the caller cannot fix it, and it says nothing of what went wrong.
 */
export const STATUS_OF_CODE: Readonly<Partial<Record<ErrorCode, number>>> = {
  /** The console: no valid bearer token (missing, malformed, forged, another issuer or audience, expired). */
  'console-unauthenticated': 401,
  /** The console: the person's role may not do this; nothing was changed. */
  'console-forbidden': 403,
  /** The console: the sign-in provider's published keys could not be read: try again shortly. */
  'console-keys-unavailable': 503,
  /** The key came before with another body: the same request again gets the same answer. */
  'idempotency-conflict': 422,
  /** Another request with the key is still being processed: try again shortly. */
  'idempotency-in-progress': 409,
  /** DynamoDB or SQS could not be reached in time: retry after Retry-After (a retry is safe). */
  'queue-unavailable': 503,
};

/** A status a library's error (middy's `createError`) carries, when it has one. */
const carriedStatus = (error: unknown): number | undefined => {
  const status = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  return typeof status === 'number' ? status : undefined;
};

/**
 * The HTTP status an error is answered with: a refusal's own (4xx), the status of the product error's code, a
 * library's 4xx (middy's parsers), 503 when a library says so, else 500.
 *
 * @example
 * statusOf(new IdempotencyInProgressError()) // 409
 * statusOf(new RequestRefusedError(415, 'Content-Type must be application/json')) // 415
 * statusOf(new TypeError('x is undefined')) // 500
 */
export const statusOf = (error: unknown): number => {
  if (error instanceof RequestRefusedError) return error.statusCode;
  if (error instanceof GatewayError) return STATUS_OF_CODE[error.code] ?? 500;
  const carried = carriedStatus(error);
  if (carried !== undefined && carried >= 400 && carried < 500) return carried;
  return carried === 503 ? 503 : 500;
};
