import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';

let sf: SalesforceSandbox;
let token: string;
const collections = '/services/data/v66.0/composite/sobjects/Case/Web_Case_Id__c';

beforeEach(async () => {
  sf = await startSalesforceSandbox({ apiAllowance: 15_000 });
  const answer = await fetch(`${sf.url}/services/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sf.clientId,
      client_secret: sf.clientSecret,
    }),
  });
  token = ((await answer.json()) as { access_token: string }).access_token;
});
afterEach(() => sf.stop());

const record = (id: string, overrides: Record<string, unknown> = {}) => ({
  attributes: { type: 'Case' },
  Web_Case_Id__c: id,
  SuppliedName: 'Ann Lee',
  SuppliedEmail: 'ann@example.com',
  ...overrides,
});

const patch = async (path: string, body: unknown) => {
  const response = await fetch(`${sf.url}${path}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    limitInfo: response.headers.get('sforce-limit-info'),
    json: (await response.json()) as { errorCode?: string }[],
  };
};

describe('Salesforce sandbox Collections', () => {
  it('answers 200 with one result per record, in order, each judged like a single upsert', async () => {
    // Act
    const answer = await patch(collections, {
      allOrNone: false,
      records: [record('c1'), record('c2', { SuppliedEmail: 'not-an-address' }), record('c3')],
    });

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual([
      { id: '500SB0000000001AAA', success: true, created: true, errors: [] },
      {
        success: false,
        errors: [
          {
            statusCode: 'INVALID_EMAIL_ADDRESS',
            message: 'Web Email: invalid email address: not-an-address',
            fields: ['SuppliedEmail'],
          },
        ],
      },
      { id: '500SB0000000002AAA', success: true, created: true, errors: [] },
    ]);
  });

  it('updates by external id on a repeat instead of creating a second case', async () => {
    // Prepare
    await patch(collections, { allOrNone: false, records: [record('c1')] });

    // Act
    const answer = await patch(collections, {
      allOrNone: false,
      records: [record('c1', { SuppliedName: 'Ann L' })],
    });

    // Assess
    expect(answer.json).toEqual([{ id: '500SB0000000001AAA', success: true, created: false, errors: [] }]);
    expect(sf.cases).toHaveLength(1);
  });

  it('refuses more than 200 records as a whole', async () => {
    // Act
    const answer = await patch(collections, {
      allOrNone: false,
      records: Array.from({ length: 201 }, (_, n) => record(`c${n}`)),
    });

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json[0].errorCode).toBe('EXCEEDED_ID_LIMIT');
    expect(sf.cases).toHaveLength(0);
  });

  it('reports Sforce-Limit-Info on every API answer, each call counted, token requests not', async () => {
    // Act
    const first = await patch(collections, { allOrNone: false, records: [record('c1')] });
    const single = await patch('/services/data/v66.0/sobjects/Case/Web_Case_Id__c/c2', {
      SuppliedEmail: 'a@b.co',
    });
    token = 'expired';
    const refused = await patch(collections, { allOrNone: false, records: [record('c3')] });

    // Assess
    expect([first.limitInfo, single.limitInfo, refused.limitInfo]).toEqual([
      'api-usage=1/15000',
      'api-usage=2/15000',
      'api-usage=3/15000',
    ]);
    expect(refused.status).toBe(401);
  });

  it('lists single upserts and Collections calls with their sizes on /_sandbox/calls', async () => {
    // Prepare
    await patch(collections, { allOrNone: false, records: [record('c1'), record('c2')] });
    await patch('/services/data/v66.0/sobjects/Case/Web_Case_Id__c/c3', { SuppliedEmail: 'a@b.co' });

    // Act
    const calls = await fetch(`${sf.url}/_sandbox/calls`).then((response) => response.json());

    // Assess
    expect(calls).toEqual([
      { kind: 'collections', status: 200, cases: 2 },
      { kind: 'upsert', status: 201, cases: 1 },
    ]);
  });

  it('does not apply a planted refusal of content to a case it already holds (Salesforce took that content), a lock it does', async () => {
    // Prepare: c1 created by an earlier call whose answer was lost; the retry meets planted record errors.
    await patch(collections, { allOrNone: false, records: [record('c1')] });
    const invalidEmail = {
      message: 'Email: invalid email address',
      errorCode: 'INVALID_EMAIL_ADDRESS',
      fields: ['SuppliedEmail'],
    };
    const locked = {
      message: 'unable to obtain exclusive access to this record',
      errorCode: 'UNABLE_TO_LOCK_ROW',
      fields: [],
    };
    sf.inject({ on: 'collections', recordErrors: { 0: [invalidEmail], 1: [invalidEmail] } });
    sf.inject({ on: 'collections', recordErrors: { 0: [locked] } });

    // Act
    const refusals = await patch(collections, { allOrNone: false, records: [record('c1'), record('c2')] });
    const lock = await patch(collections, { allOrNone: false, records: [record('c1')] });

    // Assess: the held case is upserted again; the new one is refused as planted; a lock meets the held case too.
    expect(refusals.json).toMatchObject([
      { id: '500SB0000000001AAA', success: true, created: false },
      { success: false, errors: [{ statusCode: 'INVALID_EMAIL_ADDRESS' }] },
    ]);
    expect(lock.json).toMatchObject([{ success: false, errors: [{ statusCode: 'UNABLE_TO_LOCK_ROW' }] }]);
  });
});
