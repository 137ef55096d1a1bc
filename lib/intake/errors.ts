/** Records could not all be queued; the caller gets 503 with Retry-After and retries. */
export class QueueUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(failedCount: number, options?: ErrorOptions) {
    super(`${failedCount} record(s) could not be queued`, options);
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
