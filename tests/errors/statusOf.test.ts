/**
 * The one mapping of errors to HTTP statuses (lib/http/statusOf.ts): the product's errors by their code, the
 * refusals by their own status, the libraries' 4xx as they are, and everything else 500.
 */
import { describe, expect, it } from 'vitest';
import { AwsNetworkError, AwsServiceError } from '../../lib/aws/jsonProtocol/errors.ts';
import { DeliveryHeldError } from '../../lib/delivery/errors.ts';
import { CrmConfigError } from '../../lib/downstream/crm/errors.ts';
import { type ErrorCode, GatewayError } from '../../lib/errors.ts';
import { RequestRefusedError } from '../../lib/http/errors.ts';
import { STATUS_OF_CODE, statusOf } from '../../lib/http/statusOf.ts';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  QueueUnavailableError,
} from '../../lib/intake/errors.ts';

const withStatus = (statusCode: unknown) => Object.assign(new Error('x'), { statusCode });

describe('statusOf', () => {
  it.each([
    ['an idempotency conflict', new IdempotencyConflictError(), 422],
    ['a key still in progress', new IdempotencyInProgressError(), 409],
    ['the queue unavailable', new QueueUnavailableError('x'), 503],
    ['a refusal, by its own status', new RequestRefusedError(415, 'x'), 415],
    ['a refusal of a missing record', new RequestRefusedError(404, 'x'), 404],
  ])('answers %s with its status', (_, error, status) => {
    // Act
    const answered = statusOf(error);
    // Assess
    expect(answered).toBe(status);
  });

  it.each([
    ['a setting that cannot be read', new CrmConfigError('x')],
    ['an error the workers alone throw', new DeliveryHeldError('2026-01-01T00:00:00.000Z', 1)],
    ['an AWS answer, whatever its status', new AwsServiceError('x', 'ValidationException')],
    ['a lost connection to AWS (intake turns it into queue-unavailable first)', new AwsNetworkError('x')],
    ['a fault of our own', new TypeError('x is undefined')],
    ['a thrown string', 'boom'],
    ['nothing', undefined],
    ['null', null],
  ])('answers %s 500', (_, error) => {
    expect(statusOf(error)).toBe(500);
  });

  it.each([
    ["middy's 415", withStatus(415), 415],
    ["middy's 422", withStatus(422), 422],
    ['a 503 asked for', withStatus(503), 503],
    ['another 5xx', withStatus(502), 500],
    ['a status that is no refusal', withStatus(302), 500],
    ['a status that is no number', withStatus('400'), 500],
  ])("takes a library's status: %s", (_, error, status) => {
    expect(statusOf(error)).toBe(status);
  });

  it('maps by code, so a status a product error carries by mistake counts for nothing', () => {
    // Prepare
    const error = Object.assign(new GatewayError('crm-config', 'x'), { statusCode: 400 });
    // Act
    const answered = statusOf(error);
    // Assess
    expect(answered).toBe(500);
  });

  it('maps only 4xx and 503, the statuses the operations document besides 500', () => {
    // Act
    const statuses = Object.entries(STATUS_OF_CODE) as [ErrorCode, number][];
    // Assess
    expect(statuses.filter(([, status]) => !(status === 503 || (status >= 400 && status < 500)))).toEqual([]);
  });
});
