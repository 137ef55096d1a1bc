/**
 * The soak's verdict (soak/ledger.ts): a record answered 200 is delivered exactly once (one id, one
 * downstream record, status `delivered`) or ends rejected / failed with a reason; repeats the downstream
 * recognised by the record's id are counted and allowed. Each negative control plants one broken promise (a loss,
 * a second delivery, a second record that SAP refused, a stuck record, a leak) and finds it reported and the pass
 * rule failed.
 */
import { describe, expect, it } from 'vitest';
import {
  type DownstreamCall,
  type LedgerInput,
  type PlanResult,
  promiseKept,
  reconcile,
  type StatusLookup,
} from '../../soak/ledger.ts';
import type { Plan, SoakRecord } from '../../soak/workload.ts';

const id = (n: number) => n.toString(16).padStart(32, '0');

const sale = (n: number): SoakRecord => ({
  token: `SKTESTR${n}`,
  op: 'sale',
  fields: { FrameNum: `SKTESTF${n}`, Street: `${n} Soak Lane SKTESTR${n}` },
});

/** One plan of one sale, sent once and answered `status` (200: with the record's id). */
const planOf = (n: number, status = 200): PlanResult => {
  const plan: Plan = {
    index: n,
    kind: 'single',
    op: 'sale',
    records: [sale(n)],
    fresh: 1,
    form: false,
    copies: 1,
  };
  const answer = status === 200 ? { status, ids: [id(n)] } : { status };
  return { plan, sends: [{ answers: [answer], final: answer }] } as PlanResult;
};

const sapCall = (n: number, status: number, at: number, recordId = id(n)): DownstreamCall => ({
  downstream: 'sap',
  at,
  status,
  id: recordId,
  token: `SKTESTR${n}`,
});

const delivered: StatusLookup = { http: 200, status: 'delivered' };

/** Three sales answered 200 and each created once by SAP, all `delivered`: the promise kept. */
const healthy = (): LedgerInput => ({
  results: [planOf(1), planOf(2), planOf(3)],
  sapCalls: [sapCall(1, 201, 1_000), sapCall(2, 201, 2_000), sapCall(3, 201, 3_000)],
  salesforceCalls: [],
  kills: [],
  statuses: new Map([
    [id(1), delivered],
    [id(2), delivered],
    [id(3), delivered],
  ]),
  acceptedInStore: [],
});

describe('the soak ledger', () => {
  it('keeps the promise when every record answered 200 was created once and is delivered', () => {
    // Act
    const { counts } = reconcile(healthy());
    // Assess
    expect(counts.records).toMatchObject({ accepted: 3, delivered: 3, lost: 0, duplicated: 0, stuck: 0 });
    expect(promiseKept(counts)).toBe(true);
  });

  it('allows a repeat SAP recognised by its RegistrationId (409), counted apart, after a SIGKILL or not', () => {
    // Prepare
    const input = healthy();
    input.sapCalls.push(sapCall(1, 409, 1_500), sapCall(2, 409, 9_000));
    input.kills = [2_100];
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records).toMatchObject({ delivered: 3, repeatedAtKill: 1, repeated: 1, duplicated: 0 });
    expect(promiseKept(counts)).toBe(true);
  });

  it('reports a planted loss: answered 200, never created, status delivered', () => {
    // Prepare
    const input = healthy();
    input.sapCalls = input.sapCalls.filter((call) => call.token !== 'SKTESTR2');
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records.lost).toBe(1);
    expect(counts.examples.lost?.[0]).toContain('SKTESTR2');
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports a planted duplicate: the same content created under a second id', () => {
    // Prepare
    const input = healthy();
    input.sapCalls.push(sapCall(3, 201, 4_000, id(99)));
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records).toMatchObject({ duplicated: 1, secondIds: 1 });
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports a duplicate that SAP refused for its frame: a second record that became rejected', () => {
    // Prepare: the second record of sale 2 was never named by a 200; SAP refused it (409, frame registered).
    const input = healthy();
    input.sapCalls.push(sapCall(2, 409, 5_000, id(98)));
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records).toMatchObject({ duplicated: 1, secondIds: 1, delivered: 2 });
    expect(counts.examples.duplicated?.[0]).toContain(id(98));
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports two Salesforce cases made for one content, even right after a SIGKILL', () => {
    // Prepare: a Salesforce case created twice for one content (the second upsert under another external id).
    const input = healthy();
    input.salesforceCalls.push(
      { downstream: 'salesforce', at: 1_200, status: 201, id: 'case-a', token: 'SKTESTR1' },
      { downstream: 'salesforce', at: 1_300, status: 201, id: 'case-b', token: 'SKTESTR1' },
    );
    input.kills = [1_250];
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records.duplicated).toBe(1);
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports a planted stuck record, answered or named by no answer', () => {
    // Prepare
    const input = healthy();
    input.sapCalls = input.sapCalls.filter((call) => call.token !== 'SKTESTR3');
    input.statuses.set(id(3), { http: 200, status: 'accepted' });
    input.acceptedInStore = [id(3), id(77)];
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records).toMatchObject({ stuck: 2, stuckUnanswered: 1 });
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports a planted leak: a record only ever refused (422), yet delivered', () => {
    // Prepare
    const input = healthy();
    input.results.push(planOf(4, 422));
    input.sapCalls.push(sapCall(4, 201, 6_000));
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records.leaked).toBe(1);
    expect(promiseKept(counts)).toBe(false);
  });

  it('reports a record SAP created whose status says rejected (an own repeat taken for a refusal)', () => {
    // Prepare
    const input = healthy();
    input.sapCalls.push(sapCall(1, 409, 1_500));
    input.statuses.set(id(1), { http: 200, status: 'rejected', error: 'RegistrationId already registered' });
    // Act
    const { counts } = reconcile(input);
    // Assess
    expect(counts.records.inconsistent).toBe(1);
    expect(promiseKept(counts)).toBe(false);
  });
});
