/**
 * Test mode's simulators (lib/simulators): the outcome a last name asks for, the rules the sandboxes follow, and
 * downstream ids in SAP's and Salesforce's shapes, read as the adapters read real answers.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CASE_MAPPING } from '../../lib/downstream/crm/index.ts';
import { simulateCase } from '../../lib/simulators/salesforceSimulator.ts';
import { simulateRegistration } from '../../lib/simulators/sapSimulator.ts';
import { scenarioOf } from '../../lib/simulators/scenario.ts';
import type { CaseRecord, SalesRegistration } from '../../lib/types.ts';
import { caseInput, salesRegistrationInput } from '../../testkit/factories/records.ts';

const sale = (Name: string) => ({ ...salesRegistrationInput({ Name }), DealerId: 1234 }) as SalesRegistration;
const kase = (surname: string) => caseInput({ surname }) as unknown as CaseRecord;

describe('the scenario a last name asks for', () => {
  it('reads REJECT, RETRY and FAIL without case, and delivers any other name', () => {
    expect(['Reject', 'RETRY', ' fail ', 'Sample', '', undefined].map(scenarioOf)).toEqual([
      'reject',
      'retry',
      'fail',
      'deliver',
      'deliver',
      'deliver',
    ]);
  });
});

describe('the SAP simulator', () => {
  it('delivers with a document number, the same for the same record', () => {
    const first = simulateRegistration({ id: 'a'.repeat(32), record: sale('Sample'), attempts: 0 });
    const again = simulateRegistration({ id: 'a'.repeat(32), record: sale('Sample'), attempts: 0 });
    const other = simulateRegistration({ id: 'b'.repeat(32), record: sale('Sample'), attempts: 0 });
    expect(first).toMatchObject({ kind: 'delivered', reachedDownstream: true });
    expect(first.kind === 'delivered' && first.downstreamId).toMatch(/^49\d{6}$/);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('refuses REJECT for its content, fails FAIL every time, and RETRY until two tries reached it', () => {
    const id = 'c'.repeat(32);
    expect(simulateRegistration({ id, record: sale('REJECT'), attempts: 0 })).toMatchObject({
      kind: 'permanent',
    });
    for (const attempts of [0, 1, 2, 5])
      expect(simulateRegistration({ id, record: sale('FAIL'), attempts }).kind).toBe('transient');
    expect(
      [0, 1, 2].map((attempts) => simulateRegistration({ id, record: sale('RETRY'), attempts }).kind),
    ).toEqual(['transient', 'transient', 'delivered']);
  });

  it('refuses what SAP refuses, whatever the name, keeping personal values out of the error', () => {
    const outcome = simulateRegistration({
      id: 'd'.repeat(32),
      record: { ...sale('Sample'), email: 'not-an-address' },
      attempts: 0,
    });
    expect(outcome.kind).toBe('permanent');
    expect(JSON.stringify(outcome)).not.toContain('not-an-address');
  });
});

describe('the Salesforce simulator', () => {
  it('delivers with an 18-character id beginning 500; REJECT refused; FAIL and RETRY locked', () => {
    const id = 'e'.repeat(32);
    const delivered = simulateCase({ id, record: kase('Sample'), attempts: 0 }, DEFAULT_CASE_MAPPING);
    expect(delivered.kind === 'delivered' && delivered.downstreamId).toMatch(/^500[0-9A-Za-z]{15}$/);
    expect(simulateCase({ id, record: kase('reject'), attempts: 0 }, DEFAULT_CASE_MAPPING).kind).toBe(
      'permanent',
    );
    expect(simulateCase({ id, record: kase('FAIL'), attempts: 4 }, DEFAULT_CASE_MAPPING).kind).toBe(
      'transient',
    );
    expect(simulateCase({ id, record: kase('Retry'), attempts: 2 }, DEFAULT_CASE_MAPPING).kind).toBe(
      'delivered',
    );
  });
});
