/**
 * The fault campaign's test-mode verdict (soak/testMode.ts): no test record's request at SAP or Salesforce, none in
 * a dead-letter queue, each ended as its last name says and marked `test`. Each negative control plants one breach
 * (a test record's RegistrationId in a `$batch`, its external id in a Salesforce upsert, its token alone, a dead
 * letter, a wrong end, a missing mark) and finds it counted and the pass rule failed. And the ledger, given the
 * live plans only, does not count the test records (which never reach SAP) as lost; given them all it would.
 */
import { describe, expect, it } from 'vitest';
import { type PlanResult, promiseKept, reconcile, type StatusLookup } from '../../soak/ledger.ts';
import {
  checkTestMode,
  expectedTestOutcome,
  liveLedgerInput,
  sentTestRecords,
  TEST_CLIENT,
  type TestModeInput,
  testModeKept,
} from '../../soak/testMode.ts';
import type { Plan } from '../../soak/workload.ts';

const id = (n: number) => n.toString(16).padStart(32, '0');

/** One plan of one record, answered 200 with its id; a test client's when `lastName` is given. */
const planOf = (n: number, op: 'sale' | 'case', lastName?: string): PlanResult => {
  const token = `SKTESTR${n}`;
  const fields =
    op === 'sale'
      ? { FrameNum: `SKTESTF${n}`, Name: lastName ?? 'Soakrider', Street: `${n} Soak Lane ${token}` }
      : { surname: lastName ?? `Caller${n}`, comments: `Soak case ${token}` };
  const plan: Plan = {
    index: n,
    kind: op === 'sale' ? 'single' : 'case',
    op,
    records: [{ token, op, fields }],
    fresh: 1,
    form: false,
    copies: 1,
    ...(lastName === undefined ? {} : { client: TEST_CLIENT, test: true }),
  };
  const answer = { status: 200, ids: [id(n)] };
  return { plan, sends: [{ answers: [answer], final: answer }] } as PlanResult;
};

const look = (status: string, attempts: number, downstreamId?: string): StatusLookup => ({
  http: 200,
  status,
  attempts,
  ...(downstreamId ? { downstreamId } : {}),
  test: true,
});

/** A test sale of each magic name and an ordinary one, a test case, and a live sale; all as named. */
const healthy = (): { results: PlanResult[]; input: TestModeInput } => {
  const results = [
    planOf(1, 'sale', 'REJECT'),
    planOf(2, 'sale', 'retry'),
    planOf(3, 'sale', 'Fail'),
    planOf(4, 'sale', 'Soakrider'),
    planOf(5, 'case', 'Caller5'),
    planOf(6, 'sale'),
  ];
  const input: TestModeInput = {
    records: sentTestRecords(results),
    downstreamRequests: [
      // The live sale's $batch at SAP.
      {
        method: 'POST',
        path: '/sap/opu/odata/sap/X_SRV/$batch',
        body: `"RegistrationId":"${id(6)}" SKTESTR6`,
      },
    ],
    deadLettered: new Set(),
    statuses: new Map([
      [id(1), look('rejected', 1)],
      [id(2), look('delivered', 3, '49123456')],
      [id(3), look('failed', 5)],
      [id(4), look('delivered', 1, '49654321')],
      [id(5), look('delivered', 1, `500${'a'.repeat(15)}`)],
      [id(6), { http: 200, status: 'delivered', attempts: 1, downstreamId: '49000001' }],
    ]),
    maxAttempts: 5,
  };
  return { results, input };
};

describe('the soak’s test-mode verdict', () => {
  it('names the end each last name asks for, without case', () => {
    expect(expectedTestOutcome('Reject', 5)).toEqual({ status: 'rejected', attempts: 1 });
    expect(expectedTestOutcome('RETRY', 5)).toEqual({ status: 'delivered', attempts: 3 });
    expect(expectedTestOutcome(' fail ', 5)).toEqual({ status: 'failed', attempts: 5, fewestAttempts: 1 });
    expect(expectedTestOutcome('Failure', 5)).toEqual({ status: 'delivered', attempts: 1 });
  });

  it('finds the test client’s records only, with the last name each was sent with', () => {
    // Act
    const records = sentTestRecords(healthy().results);
    // Assess
    expect(records.map((record) => [record.id, record.op, record.lastName])).toEqual([
      [id(1), 'sale', 'REJECT'],
      [id(2), 'sale', 'retry'],
      [id(3), 'sale', 'Fail'],
      [id(4), 'sale', 'Soakrider'],
      [id(5), 'case', 'Caller5'],
    ]);
  });

  it('keeps the promise when no test record reached a downstream or a dead-letter queue and each ended as named', () => {
    // Act
    const { counts, examples } = checkTestMode(healthy().input);
    // Assess
    expect(counts).toEqual({
      testRecords: 5,
      testAsNamed: 5,
      testAtDownstream: 0,
      testDeadLettered: 0,
      testNotAsNamed: 0,
      testUnmarked: 0,
    });
    expect(examples).toEqual({});
    expect(testModeKept(counts)).toBe(true);
  });

  it.each([
    [
      'its RegistrationId in a $batch',
      { method: 'POST', path: '/sap/opu/odata/sap/X_SRV/$batch', body: `"RegistrationId":"${id(4)}"` },
    ],
    [
      'its external id in a Salesforce upsert',
      { method: 'PATCH', path: `/services/data/v60.0/sobjects/Case/Web_Case_Id__c/${id(5)}`, body: '{}' },
    ],
    [
      'its token alone',
      { method: 'POST', path: '/services/data/v60.0/composite/sobjects', body: 'SKTESTR2' },
    ],
  ])('counts a test record’s request at a downstream: %s (planted)', (_label, request) => {
    // Prepare
    const { input } = healthy();
    // Act
    const { counts, examples } = checkTestMode({
      ...input,
      downstreamRequests: [...input.downstreamRequests, request],
    });
    // Assess
    expect(counts.testAtDownstream).toBe(1);
    expect(examples.testAtDownstream).toHaveLength(1);
    expect(testModeKept(counts)).toBe(false);
  });

  it('counts a test record in a dead-letter queue (planted), not a live one', () => {
    // Prepare
    const { input } = healthy();
    // Act
    const { counts } = checkTestMode({ ...input, deadLettered: new Set([id(3), id(6)]) });
    // Assess
    expect(counts.testDeadLettered).toBe(1);
    expect(testModeKept(counts)).toBe(false);
  });

  it.each([
    ['RETRY delivered at once', 2, look('delivered', 1, '49123456')],
    ['REJECT delivered', 1, look('delivered', 1, '49123456')],
    ['FAIL left accepted', 3, look('accepted', 2)],
    ['FAIL failed after more attempts than DELIVERY_MAX_ATTEMPTS', 3, look('failed', 6)],
    ['an ordinary sale without an SAP-style number', 4, look('delivered', 1, '0090012345')],
    ['an ordinary case without a Salesforce-style id', 5, look('delivered', 1, '49123456')],
  ])('counts a test record not ended as named: %s (planted)', (_label, n, status) => {
    // Prepare
    const { input } = healthy();
    const statuses = new Map(input.statuses);
    statuses.set(id(n), status);
    // Act
    const { counts, examples } = checkTestMode({ ...input, statuses });
    // Assess
    expect(counts.testNotAsNamed).toBe(1);
    expect(examples.testNotAsNamed?.[0]).toContain(id(n));
    expect(testModeKept(counts)).toBe(false);
  });

  it('takes a FAIL record failed after fewer attempts than tries (a try lost to a fault), as a live one would be', () => {
    // Prepare: first run of the campaign with test mode: 6 FAIL sales failed after 4 attempts of 5 tries.
    const { input } = healthy();
    const statuses = new Map(input.statuses);
    statuses.set(id(3), look('failed', 4));
    // Act
    const { counts } = checkTestMode({ ...input, statuses });
    // Assess
    expect(counts.testNotAsNamed).toBe(0);
  });

  it('counts a test record whose look-up is not marked test (planted)', () => {
    // Prepare
    const { input } = healthy();
    const statuses = new Map(input.statuses);
    statuses.set(id(1), { ...look('rejected', 1), test: undefined });
    // Act
    const { counts } = checkTestMode({ ...input, statuses });
    // Assess
    expect(counts.testUnmarked).toBe(1);
    expect(testModeKept(counts)).toBe(false);
  });
});

describe('the ledger beside test records', () => {
  it('given the live plans only, counts no test record lost or stuck; given them all, it would', () => {
    // Prepare: the live sale created once by SAP; the test records nowhere at SAP or Salesforce, one still accepted.
    const { results, input } = healthy();
    const rest = {
      sapCalls: [{ downstream: 'sap' as const, at: 1_000, status: 201, id: id(6), token: 'SKTESTR6' }],
      salesforceCalls: [],
      kills: [],
      statuses: new Map(input.statuses),
    };
    // Act
    const live = reconcile({ ...liveLedgerInput(results, [id(3)]), ...rest });
    const everything = reconcile({ results, acceptedInStore: [id(3)], ...rest });
    // Assess
    expect(live.counts.records).toMatchObject({ accepted: 1, delivered: 1, lost: 0, stuck: 0 });
    expect(promiseKept(live.counts)).toBe(true);
    expect(everything.counts.records.lost + everything.counts.records.inconsistent).toBeGreaterThan(0);
    expect(promiseKept(everything.counts)).toBe(false);
  });
});
