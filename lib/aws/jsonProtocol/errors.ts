import { GatewayError } from '../../errors.ts';

/** What the SDK puts on every answer and error as `$metadata`. */
export interface ResponseMetadata {
  httpStatusCode?: number;
  requestId?: string;
  attempts: number;
  totalRetryDelay: number;
}

/**
 * An error answer of an AWS service, shaped as the SDK's ServiceException: `name` is the AWS error code
 * (`ConditionalCheckFailedException`; the code base tells them apart by it, as with the SDK), `$fault` says whose
 * fault, `$metadata` has the status and request id, and the answer's other fields (a conditional check's `Item`,
 * say) are copied on. Its product `code` is `aws-service` whatever AWS answered.
 *
 * @example
 * const error = new AwsServiceError('throttled', 'ThrottlingException');
 * [error.name, error.code, error.retryable]; // ['ThrottlingException', 'aws-service', true]
 */
export class AwsServiceError extends GatewayError {
  $fault: 'client' | 'server' = 'server';
  $metadata: ResponseMetadata = { attempts: 1, totalRetryDelay: 0 };
  $retryable?: { throttling: boolean };
  [field: string]: unknown;

  constructor(message: string, name = 'AwsServiceError') {
    super('aws-service', message);
    this.name = name;
  }

  /**
   * The SDK's standard retry rule: a 5xx or 429 answer, throttling, or a transient code. Read when asked, since
   * the client sets `$metadata` after building the error.
   */
  override get retryable(): boolean {
    const status = this.$metadata.httpStatusCode ?? 0;
    return (
      status >= 500 || status === 429 || THROTTLING_CODES.has(this.name) || TRANSIENT_CODES.has(this.name)
    );
  }
}

/** A class per error code the code base tests with `instanceof`, as the SDK packages export them. */
export const serviceErrorClass = (code: string) =>
  class extends AwsServiceError {
    constructor(message = code) {
      super(message, code);
    }
  };

/** No answer: the connection failed or the attempt ran out of time; always worth another attempt. */
export class AwsNetworkError extends GatewayError {
  override name = 'AwsNetworkError';
  $metadata: ResponseMetadata = { attempts: 1, totalRetryDelay: 0 };
  constructor(message: string, options?: ErrorOptions) {
    super('aws-network', message, { ...options, retryable: true });
  }
}

/**
 * The error a call rejects with when the caller's `abortSignal` aborts, shaped as the SDK's (a plain `Error`
 * named `AbortError`, message `Request aborted`), so code that tells an abort apart by `error.name` works with
 * either client. The signal's reason, when it is an error (`AbortSignal.timeout`'s `TimeoutError`), is the cause.
 *
 * @example
 * const controller = new AbortController();
 * controller.abort();
 * abortError(controller.signal); // Error { name: 'AbortError', message: 'Request aborted', cause: DOMException }
 */
export const abortError = (signal?: AbortSignal): Error => {
  const reason: unknown = signal?.reason;
  const error =
    reason instanceof Error
      ? new Error('Request aborted', { cause: reason })
      : new Error(reason === undefined ? 'Request aborted' : String(reason));
  error.name = 'AbortError';
  return error;
};

/** `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException` → `ConditionalCheckFailedException` */
export const errorCode = (type: string): string => type.slice(type.lastIndexOf('#') + 1).split(':')[0];

/** Codes that mean "slow down" in any AWS service (the SDK's throttling list). */
export const THROTTLING_CODES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

/** Codes of transient failures worth another attempt, besides throttling and 5xx answers. */
export const TRANSIENT_CODES = new Set(['RequestTimeout', 'RequestTimeoutException', 'InternalError']);
