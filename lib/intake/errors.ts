/**
 * The records could not all be stored and queued in time (SQS or DynamoDB unavailable, or the request's deadline
 * passed): the caller gets 503 with Retry-After and retries. Whatever was stored is delivered once all the same.
 */
export class QueueUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}

/** The `Idempotency-Key` was used before with another body. */
export class IdempotencyConflictError extends Error {
  readonly statusCode = 422;
  constructor() {
    super('Idempotency-Key was already used with a different body');
    this.name = 'IdempotencyConflictError';
  }
}

/** Another request with this `Idempotency-Key` is still being processed: retry later. */
export class IdempotencyInProgressError extends Error {
  readonly statusCode = 409;
  constructor() {
    super('a request with this Idempotency-Key is still being processed; retry later');
    this.name = 'IdempotencyInProgressError';
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
