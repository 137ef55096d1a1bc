/**
 * The product's one error base: every error class of lib/ extends {@link GatewayError}, so whatever catches one
 * reads the same three things: a stable `code` (what happened, for code and alarms; the message is for people
 * and may change), whether trying the same work again later may succeed (`retryable`), and the `cause`.
 *
 * The ground floor: it imports nothing of lib/, so any module may import it without a circle.
 *
 * Names: every error class is a noun ending in `Error` (`DeliveryHeldError`, `RequestRefusedError`), as the
 * platform's are (`TypeError`, `AbortError`, `TimeoutError`) and the AWS SDK's service errors are (`*Exception`
 * aside): a name in a log or a stack then says it is an error, and one search (`Error\b`) finds them all.
 *
 * Codes: lower-case words joined by hyphens (`queue-unavailable`), one per class and listed in {@link ErrorCode},
 * so no code can pass for a Node system error's (`ECONNRESET`, which lib/intake/errors.ts's `isAwsUnavailable`
 * reads as AWS being unreachable) nor for one of Node's own (`ERR_INVALID_ARG_TYPE`). What a code means to an
 * HTTP caller is decided at the edge alone (lib/http/statusOf.ts), not here.
 */

/** Every code of the product's errors: one vocabulary, so the edge's mapping and the alarms cannot misspell one. */
export type ErrorCode =
  | 'aws-network'
  | 'aws-service'
  | 'case-mapping'
  | 'console-forbidden'
  | 'console-keys-unavailable'
  | 'console-unauthenticated'
  | 'crm-config'
  | 'delivery-held'
  | 'delivery-retry-later'
  | 'erp-config'
  | 'idempotency-conflict'
  | 'idempotency-in-progress'
  | 'malformed-message'
  | 'queue-unavailable'
  | 'request-refused'
  | 'webhook-given-up'
  | 'webhook-retry-later';

/** What an error is built with besides its code and message: its cause, and whether a retry may succeed. */
export interface GatewayErrorOptions extends ErrorOptions {
  /** Whether the same work may succeed when tried again later; false unless said. */
  retryable?: boolean;
}

/**
 * The base of every error the product throws: a stable `code`, `retryable`, and the standard `cause`.
 * Subclasses set their own `name` as data (class names do not survive minification).
 *
 * @example
 * class QueueUnavailableError extends GatewayError {
 *   override name = 'QueueUnavailableError';
 *   constructor(message: string, options?: ErrorOptions) {
 *     super('queue-unavailable', message, { ...options, retryable: true });
 *   }
 * }
 * const error = new QueueUnavailableError('not queued', { cause: new Error('SQS down') });
 * [error.code, error.retryable, error.cause]; // ['queue-unavailable', true, Error('SQS down')]
 */
export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly code: ErrorCode;
  readonly #retryable: boolean;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    const { retryable = false, ...errorOptions } = options;
    super(message, errorOptions);
    this.code = code;
    this.#retryable = retryable;
  }

  /** Whether the same work may succeed when tried again later (a getter: an AWS error decides from its answer). */
  get retryable(): boolean {
    return this.#retryable;
  }
}
