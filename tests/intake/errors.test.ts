/**
 * Intake's errors: which failures are AWS being unavailable (the caller gets 503 and retries) and which are
 * faults of our own (500), and the codes and texts of the refusals (their statuses are tests/errors/statusOf.test.ts's).
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors.ts';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  isAwsUnavailable,
  QueueUnavailableError,
} from '../../lib/intake/errors.ts';

const named = (name: string) => Object.assign(new Error('x'), { name });
const withCode = (code: unknown) => Object.assign(new Error('x'), { code });

describe('isAwsUnavailable', () => {
  it.each([
    [
      'an AWS answer (it carries $metadata)',
      Object.assign(new Error('x'), { $metadata: { httpStatusCode: 500 } }),
    ],
    ['an AWS answer whose $metadata is empty', Object.assign(new Error('x'), { $metadata: null })],
    ['the deadline (AbortError)', new DOMException('late', 'AbortError')],
    ['the deadline (TimeoutError)', new DOMException('late', 'TimeoutError')],
    ['an abort named by the SDK', named('AbortError')],
    ['a timeout named by the SDK', named('TimeoutError')],
    ['a network failure of the JSON clients', named('AwsNetworkError')],
    ['a lost connection', withCode('ECONNRESET')],
    ['a refused connection', withCode('ECONNREFUSED')],
  ])('is true for %s', (_, error) => {
    expect(isAwsUnavailable(error)).toBe(true);
  });

  it.each([
    ['an error of our own', new TypeError('x is undefined')],
    ['an error whose $metadata is absent', Object.assign(new Error('x'), { $metadata: undefined })],
    ['a code that is no system error code', withCode('ERR_INVALID_ARG_TYPE')],
    ['a code in lower case', withCode('econnreset')],
    ['a code with more after it', withCode('ECONNRESET2')],
    ['a code with something before it', withCode('XECONNRESET')],
    ['a numeric code', withCode(104)],
    ['a code that is no text, though it reads as one', withCode({ toString: () => 'ECONNRESET' })],
    ['another DOMException', new DOMException('x', 'DataCloneError')],
    ['a thrown string', 'ECONNRESET'],
    ['a thrown object that looks like an AWS answer', { name: 'AbortError', $metadata: {} }],
    ['nothing', undefined],
  ])('is false for %s', (_, error) => {
    expect(isAwsUnavailable(error)).toBe(false);
  });
});

describe('intake refusals', () => {
  it('QueueUnavailableError asks for a retry and carries its cause', () => {
    // Prepare
    const cause = new Error('SQS down');
    // Act
    const error = new QueueUnavailableError('could not be queued', { cause });
    // Assess
    expect(error).toBeInstanceOf(GatewayError);
    expect([error.name, error.code, error.retryable, error.message, error.cause]).toEqual([
      'QueueUnavailableError',
      'queue-unavailable',
      true,
      'could not be queued',
      cause,
    ]);
  });

  it('IdempotencyConflictError names the key and is no use retrying', () => {
    // Act
    const error = new IdempotencyConflictError();
    // Assess
    expect([error.name, error.code, error.retryable, error.message]).toEqual([
      'IdempotencyConflictError',
      'idempotency-conflict',
      false,
      'Idempotency-Key was already used with a different body',
    ]);
  });

  it('IdempotencyInProgressError asks to retry later', () => {
    // Act
    const error = new IdempotencyInProgressError();
    // Assess
    expect([error.name, error.code, error.retryable, error.message]).toEqual([
      'IdempotencyInProgressError',
      'idempotency-in-progress',
      true,
      'a request with this Idempotency-Key is still being processed; retry later',
    ]);
  });

  it('carry a code, not an HTTP status (the edge decides it, lib/http/statusOf.ts)', () => {
    // Act
    const errors = [
      new QueueUnavailableError('x'),
      new IdempotencyConflictError(),
      new IdempotencyInProgressError(),
    ];
    // Assess
    expect(errors.filter((error) => 'statusCode' in error)).toEqual([]);
  });
});
