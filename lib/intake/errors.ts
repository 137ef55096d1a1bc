import { GatewayError } from '../errors.ts';

/**
 * The records could not all be stored and queued in time (SQS or DynamoDB unavailable, or the request's deadline
 * passed): the caller is asked to retry (lib/http/statusOf.ts answers it 503 with Retry-After). Whatever was
 * stored is delivered once all the same.
 */
export class QueueUnavailableError extends GatewayError {
  override name = 'QueueUnavailableError';
  constructor(message: string, options?: ErrorOptions) {
    super('queue-unavailable', message, { ...options, retryable: true });
  }
}

/** The `Idempotency-Key` was used before with another body: the same request again gets the same refusal. */
export class IdempotencyConflictError extends GatewayError {
  override name = 'IdempotencyConflictError';
  constructor() {
    super('idempotency-conflict', 'Idempotency-Key was already used with a different body');
  }
}

/** Another request with this `Idempotency-Key` is still being processed: retry later. */
export class IdempotencyInProgressError extends GatewayError {
  override name = 'IdempotencyInProgressError';
  constructor() {
    super(
      'idempotency-in-progress',
      'a request with this Idempotency-Key is still being processed; retry later',
      { retryable: true },
    );
  }
}

/**
 * Whether an error came from talking to AWS (an answer with `$metadata`, a lost connection, a deadline), as
 * opposed to a fault of our own: those are answered 503 (retry), ours 500.
 *
 * @example
 * isAwsUnavailable(new DOMException('late', 'AbortError')) // true
 */
export const isAwsUnavailable = (error: unknown): boolean => {
  if (!(error instanceof Error) && !(typeof DOMException !== 'undefined' && error instanceof DOMException))
    return false;
  const { name } = error as Error;
  const withFields = error as Error & { $metadata?: unknown; code?: unknown };
  return (
    withFields.$metadata !== undefined ||
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    name === 'AwsNetworkError' ||
    (typeof withFields.code === 'string' && /^E[A-Z]+$/.test(withFields.code))
  );
};
