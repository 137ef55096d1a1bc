/**
 * Intake's errors: which failures are AWS being unavailable (the caller gets 503 and retries) and which are
 * faults of our own (500), and the statuses and texts of the refusals.
 */
import { describe, expect, it } from 'vitest';
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
  it('QueueUnavailableError is a 503 carrying its cause', () => {
    const cause = new Error('SQS down');
    const error = new QueueUnavailableError('could not be queued', { cause });
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.statusCode, error.message, error.cause]).toEqual([
      'QueueUnavailableError',
      503,
      'could not be queued',
      cause,
    ]);
  });

  it('IdempotencyConflictError is a 422 naming the key', () => {
    const error = new IdempotencyConflictError();
    expect([error.name, error.statusCode, error.message]).toEqual([
      'IdempotencyConflictError',
      422,
      'Idempotency-Key was already used with a different body',
    ]);
  });

  it('IdempotencyInProgressError is a 409 asking to retry later', () => {
    const error = new IdempotencyInProgressError();
    expect([error.name, error.statusCode, error.message]).toEqual([
      'IdempotencyInProgressError',
      409,
      'a request with this Idempotency-Key is still being processed; retry later',
    ]);
  });
});
