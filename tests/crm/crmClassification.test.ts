import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SalesforceFault } from '../../sandbox/salesforceSandbox.ts';
import { type CrmFixture, fullCase, PERSONAL_VALUES, startCrm } from './fixtures.ts';

// One sandbox for the whole table: each case queues its own fault for its own upsert.
let fixture: CrmFixture;
beforeAll(async () => {
  fixture = await startCrm();
});
afterAll(() => fixture.sf.stop());

let sequence = 0;
const upsertWith = (fault?: SalesforceFault, record = fullCase()) => {
  sequence += 1;
  if (fault) fixture.sf.inject(fault);
  return fixture.crm.upsertCase(record, `case-${sequence}`);
};

const errorEntry = (message: string, errorCode: string) => ({ message, errorCode, fields: [] });

describe('CRM adapter: classification of answers (docs/behaviour.md#salesforce-protocol)', () => {
  it.each([
    [
      403,
      [errorEntry('TotalRequests Limit exceeded.', 'REQUEST_LIMIT_EXCEEDED')],
      'HTTP 403: REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded.',
    ],
    [
      403,
      [errorEntry('Insufficient access', 'INSUFFICIENT_ACCESS')],
      'HTTP 403: INSUFFICIENT_ACCESS: Insufficient access',
    ],
    [
      503,
      [errorEntry('Service temporarily unavailable', 'SERVER_UNAVAILABLE')],
      'HTTP 503: SERVER_UNAVAILABLE: Service temporarily unavailable',
    ],
    [
      500,
      [errorEntry('An unexpected error occurred', 'UNKNOWN_EXCEPTION')],
      'HTTP 500: UNKNOWN_EXCEPTION: An unexpected error occurred',
    ],
    [502, [errorEntry('Bad gateway', 'BAD_GATEWAY')], 'HTTP 502: BAD_GATEWAY: Bad gateway'],
    [408, [errorEntry('Request timeout', 'REQUEST_TIMEOUT')], 'HTTP 408: REQUEST_TIMEOUT: Request timeout'],
    [
      429,
      [errorEntry('Too many requests', 'REQUEST_LIMIT_EXCEEDED')],
      'HTTP 429: REQUEST_LIMIT_EXCEEDED: Too many requests',
    ],
    [302, [errorEntry('Moved', 'MOVED')], 'HTTP 302: MOVED: Moved'],
    [
      400,
      [errorEntry('unable to obtain exclusive access to this record', 'UNABLE_TO_LOCK_ROW')],
      'HTTP 400: UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record',
    ],
  ])('HTTP %i %j is transient, counted as an attempt', async (status, errors, error) => {
    // Act
    const outcome = await upsertWith({ status, errors });

    // Assess
    expect(outcome).toEqual({ kind: 'transient', error, reachedDownstream: true });
  });

  it.each([400, 404, 300, 405, 409, 415])(
    'HTTP %i is permanent with the messages of the error array joined by "; "',
    async (status) => {
      // Prepare
      const errors = [
        {
          message: 'Site Name: bad value for restricted picklist field',
          errorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
          fields: ['Site_Name__c'],
        },
        errorEntry('Frame Number: invalid format', 'FIELD_CUSTOM_VALIDATION_EXCEPTION'),
      ];

      // Act
      const outcome = await upsertWith({ status, errors });

      // Assess
      expect(outcome).toEqual({
        kind: 'permanent',
        error: 'Site Name: bad value for restricted picklist field; Frame Number: invalid format',
        reachedDownstream: true,
      });
    },
  );

  it('a 400 UNABLE_TO_LOCK_ROW among other errors is transient; the same 400 with other codes only is permanent', async () => {
    // Prepare: Salesforce may list the lock next to another entry; the lock still stopped the upsert.
    const lock = errorEntry('unable to obtain exclusive access to this record', 'UNABLE_TO_LOCK_ROW');
    const other = errorEntry('Frame Number: invalid format', 'FIELD_CUSTOM_VALIDATION_EXCEPTION');

    // Act
    const locked = await upsertWith({ status: 400, errors: [other, lock] });
    const refused = await upsertWith({ status: 400, errors: [other] });
    const notA400 = await upsertWith({ status: 404, errors: [lock] });

    // Assess
    expect(locked).toMatchObject({ kind: 'transient', reachedDownstream: true });
    expect(refused).toMatchObject({ kind: 'permanent', error: 'Frame Number: invalid format' });
    expect(notA400).toMatchObject({ kind: 'permanent' });
  });

  it('a real 300 (a list of the matching records) is permanent with a clear text', async () => {
    // Act
    const outcome = await upsertWith({ status: 300 });

    // Assess
    expect(outcome).toEqual({
      kind: 'permanent',
      error: 'HTTP 300: the external id matches more than one Case',
      reachedDownstream: true,
    });
  });

  it.each([
    [400, 'permanent', 'HTTP 400'],
    [404, 'permanent', 'HTTP 404'],
    [503, 'transient', 'HTTP 503'],
    [403, 'transient', 'HTTP 403'],
  ])('HTTP %i with a body that is not JSON is %s with the text "%s"', async (status, kind, error) => {
    // Act
    const outcome = await upsertWith({ status, malformedBody: true });

    // Assess
    expect(outcome).toEqual({ kind, error, reachedDownstream: true });
  });

  it('Salesforce refusing the body (missing email, unknown field) is permanent with its message', async () => {
    // Act
    const missingEmail = await upsertWith(undefined, fullCase({ email: '' }));

    // Assess
    expect(missingEmail).toEqual({
      kind: 'permanent',
      error: 'Required fields are missing: [SuppliedEmail]',
      reachedDownstream: true,
    });
  });

  it('keeps personal data of the case out of the error text', async () => {
    // Prepare
    const badEmail = fullCase({ email: 'aroha.ngata-at-example.org' });
    const echo =
      'Duplicate contact Aroha Ngata-Whitfield (aroha.ngata@example.org, 021 555 0199, 09 555 0123)';

    // Act
    const invalidEmail = await upsertWith(undefined, badEmail);
    const echoed = await upsertWith({ status: 400, errors: [errorEntry(echo, 'DUPLICATES_DETECTED')] });

    // Assess
    expect(invalidEmail).toMatchObject({
      kind: 'permanent',
      error: 'Web Email: invalid email address: [redacted]',
    });
    expect(echoed).toMatchObject({
      kind: 'permanent',
      error: 'Duplicate contact [redacted] [redacted] ([redacted], [redacted], [redacted])',
    });
    const texts = JSON.stringify([invalidEmail, echoed]);
    for (const value of [...PERSONAL_VALUES, 'aroha.ngata-at-example.org']) {
      expect(texts).not.toContain(value);
    }
  });

  it('cuts a long downstream message to about 500 characters', async () => {
    // Act
    const outcome = await upsertWith({ status: 400, errors: [errorEntry('y'.repeat(5000), 'X')] });

    // Assess
    expect(outcome.kind !== 'delivered' && outcome.error.length).toBe(500);
  });
});
