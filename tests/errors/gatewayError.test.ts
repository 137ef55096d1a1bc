/**
 * The product's one error base (lib/errors.ts): its code, whether a retry may succeed, its cause, and the same
 * three read off every kind of error lib/ throws.
 */
import { describe, expect, it } from 'vitest';
import { AwsNetworkError, AwsServiceError } from '../../lib/aws/jsonProtocol/errors.ts';
import {
  DeliveryHeldError,
  DeliveryRetryLaterError,
  MalformedMessageError,
} from '../../lib/delivery/errors.ts';
import { CaseMappingError, CrmConfigError } from '../../lib/downstream/crm/errors.ts';
import { ErpConfigError } from '../../lib/downstream/erp/errors.ts';
import { GatewayError } from '../../lib/errors.ts';
import { RequestRefusedError } from '../../lib/http/errors.ts';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  QueueUnavailableError,
} from '../../lib/intake/errors.ts';
import { WebhookGivenUpError, WebhookRetryLaterError } from '../../lib/webhooks/errors.ts';

describe('GatewayError', () => {
  it('carries its code, message and cause, and is no use retrying unless it says so', () => {
    // Prepare
    const cause = new Error('underneath');
    // Act
    const error = new GatewayError('crm-config', 'bad setting', { cause });
    // Assess
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.message, error.cause, error.retryable]).toEqual([
      'GatewayError',
      'crm-config',
      'bad setting',
      cause,
      false,
    ]);
  });

  it('says when a retry may succeed, and has no cause when given none', () => {
    // Act
    const error = new GatewayError('queue-unavailable', 'later', { retryable: true });
    // Assess
    expect(error.retryable).toBe(true);
    expect('cause' in error).toBe(false);
  });
});

describe('every error of lib/', () => {
  // Prepare
  const kinds: [GatewayError, string, string, boolean][] = [
    [new AwsNetworkError('reset'), 'AwsNetworkError', 'aws-network', true],
    [new AwsServiceError('no', 'ValidationException'), 'ValidationException', 'aws-service', false],
    [new AwsServiceError('slow', 'ThrottlingException'), 'ThrottlingException', 'aws-service', true],
    [new DeliveryHeldError('2026-01-01T00:00:00.000Z', 30), 'DeliveryHeldError', 'delivery-held', true],
    [new DeliveryRetryLaterError(1, 2), 'DeliveryRetryLaterError', 'delivery-retry-later', true],
    [new MalformedMessageError(), 'MalformedMessageError', 'malformed-message', false],
    [new CrmConfigError('x'), 'CrmConfigError', 'crm-config', false],
    [new CaseMappingError('x'), 'CaseMappingError', 'case-mapping', false],
    [new ErpConfigError('x'), 'ErpConfigError', 'erp-config', false],
    [new RequestRefusedError(400, 'x'), 'RequestRefusedError', 'request-refused', false],
    [new QueueUnavailableError('x'), 'QueueUnavailableError', 'queue-unavailable', true],
    [new IdempotencyConflictError(), 'IdempotencyConflictError', 'idempotency-conflict', false],
    [new IdempotencyInProgressError(), 'IdempotencyInProgressError', 'idempotency-in-progress', true],
    [new WebhookRetryLaterError('x'), 'WebhookRetryLaterError', 'webhook-retry-later', true],
    [new WebhookGivenUpError('x'), 'WebhookGivenUpError', 'webhook-given-up', false],
  ];

  it.each(kinds)('%s is a GatewayError named %s, code %s, retryable %s', (error, name, code, retryable) => {
    // Assess
    expect(error).toBeInstanceOf(GatewayError);
    expect([error.name, error.code, error.retryable]).toEqual([name, code, retryable]);
  });

  it('keeps a CaseMappingError a CrmConfigError (a mapping file is a CRM setting)', () => {
    expect(new CaseMappingError('x')).toBeInstanceOf(CrmConfigError);
  });

  it('decides an AWS answer retryable from its status, as the SDK does, once the client has set it', () => {
    // Prepare
    const error = new AwsServiceError('boom', 'SomethingFailed');
    const before = error.retryable;
    // Act
    error.$metadata = { httpStatusCode: 503, attempts: 1, totalRetryDelay: 0 };
    // Assess
    expect([before, error.retryable]).toEqual([false, true]);
  });
});
