import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ErpFixture, PERSONAL_VALUES, registration, startErp } from './fixtures.ts';

// One sandbox for the whole table: each case queues its own fault for its own POST.
let fixture: ErpFixture;
beforeAll(async () => {
  fixture = await startErp();
});
afterAll(() => fixture.sap.stop());

let sequence = 0;
/** Delivers a fresh registration (own id and frame) after queueing `fault`. */
const deliverWith = (fault: Parameters<ErpFixture['sap']['inject']>[0]) => {
  sequence += 1;
  fixture.sap.inject(fault);
  return fixture.erp.deliverSalesRegistration(
    registration({ FrameNum: `FRAME-${sequence}` }),
    `reg-${sequence}`,
  );
};

describe('ERP adapter: classification of answers (docs/behaviour.md#sap-protocol)', () => {
  it.each([401, 403, 408, 429, 500, 502, 503, 504, 301, 302, 307])(
    'HTTP %i is transient, counted as an attempt, with the ERP message',
    async (status) => {
      // Prepare
      const fault = { status, message: 'Backend busy, try later' };

      // Act
      const outcome = await deliverWith(fault);

      // Assess
      expect(outcome).toEqual({
        kind: 'transient',
        error: `HTTP ${status}: Backend busy, try later`,
        reachedDownstream: true,
      });
    },
  );

  it.each([400, 404, 409, 422, 405, 410, 413, 415])(
    'HTTP %i is permanent with error.message.value as the error text',
    async (status) => {
      // Prepare
      const fault = { status, message: `Dealer 1234 is not authorised for model CB500F (${status})` };

      // Act
      const outcome = await deliverWith(fault);

      // Assess
      expect(outcome).toEqual({
        kind: 'permanent',
        error: `Dealer 1234 is not authorised for model CB500F (${status})`,
        reachedDownstream: true,
      });
    },
  );

  it.each([
    [400, 'permanent', 'HTTP 400'],
    [409, 'permanent', 'HTTP 409'],
    [503, 'transient', 'HTTP 503'],
  ])('HTTP %i with a body that is not JSON is %s with the text "%s"', async (status, kind, error) => {
    // Act
    const outcome = await deliverWith({ status, malformedBody: true });

    // Assess
    expect(outcome).toEqual({ kind, error, reachedDownstream: true });
  });

  it('a 403 without X-CSRF-Token: Required is transient and fetches no new token', async () => {
    // Prepare
    const fetchesBefore = fixture.sap.requests.filter((request) => request.method === 'GET').length;

    // Act
    const outcome = await deliverWith({ status: 403, message: 'No authorisation for ZSD_REG' });

    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', error: 'HTTP 403: No authorisation for ZSD_REG' });
    expect(fixture.sap.requests.filter((request) => request.method === 'GET')).toHaveLength(fetchesBefore);
  });

  it('the sandbox refusing a registration (validation, frame already registered) is permanent with its message', async () => {
    // Prepare
    const first = registration({ FrameNum: 'FRAME-DUPLICATE' });
    await fixture.erp.deliverSalesRegistration(first, 'reg-dup-1');

    // Act
    const duplicate = await fixture.erp.deliverSalesRegistration(first, 'reg-dup-2');
    const invalid = await fixture.erp.deliverSalesRegistration(
      registration({ FrameNum: 'FRAME-INVALID', SaleDate: '14/03/2025' }),
      'reg-invalid',
    );

    // Assess
    expect(duplicate).toEqual({
      kind: 'permanent',
      error: expect.stringMatching(
        /^Frame number FRAME-DUPLICATE is already registered \(document 4900\d{4}\)$/,
      ),
      reachedDownstream: true,
    });
    expect(invalid).toEqual({
      kind: 'permanent',
      error: "Property 'SaleDate' is not a date in the format YYYY-MM-DD",
      reachedDownstream: true,
    });
  });

  it('keeps personal data of the record out of the error text', async () => {
    // Prepare
    const echo = `Customer Giulietta Marchetti, 12 Harbour Parade, phone 0412 555 019, giulietta.marchetti@example.com is blocked`;
    const invalidEmail = registration({
      FrameNum: 'FRAME-EMAIL',
      email: 'giulietta.marchetti-at-example.com',
    });

    // Act
    const echoed = await deliverWith({ status: 422, message: echo });
    const refused = await fixture.erp.deliverSalesRegistration(invalidEmail, 'reg-email');

    // Assess
    expect(echoed).toMatchObject({
      kind: 'permanent',
      error: 'Customer [redacted] [redacted], [redacted], phone [redacted], [redacted] is blocked',
    });
    expect(refused).toMatchObject({ kind: 'permanent', error: 'E-mail address [redacted] is not valid' });
    for (const value of [...PERSONAL_VALUES, 'giulietta.marchetti-at-example.com']) {
      expect(JSON.stringify([echoed, refused])).not.toContain(value);
    }
  });

  it("keeps the dealer's operator (a staff member's name) out of the error text", async () => {
    // Prepare: SAP echoes the operator named on the sale.
    fixture.sap.inject({ status: 422, message: 'Operator Rosalind Okonkwo-Vance may not register sales' });
    // Act
    const outcome = await fixture.erp.deliverSalesRegistration(
      registration({ FrameNum: 'FRAME-OPERATOR', Operator: 'Rosalind Okonkwo-Vance' }),
      'reg-operator',
    );
    // Assess
    expect(outcome).toMatchObject({ kind: 'permanent', error: 'Operator [redacted] may not register sales' });
  });

  it('cuts a long downstream message to about 500 characters', async () => {
    // Act
    const outcome = await deliverWith({ status: 400, message: 'x'.repeat(5000) });

    // Assess
    expect(outcome.kind).toBe('permanent');
    expect(outcome.kind !== 'delivered' && outcome.error.length).toBe(500);
  });
});
