import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCrmClient, MAX_COLLECTION_SIZE, parseApiUsage } from '../../lib/downstream/crm/index.ts';
import type { BatchItem } from '../../lib/downstream/types.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { readBody } from '../../testkit/readBody.ts';
import {
  type CrmFixture,
  fullCase,
  fullCaseSalesforceBody,
  PERSONAL_VALUES,
  requestLines,
  startCrm,
  TOKEN,
} from './fixtures.ts';

const COLLECTIONS = '/services/data/v66.0/composite/sobjects/Case/Web_Case_Id__c';

let fixture: CrmFixture | undefined;
let scripted: Server | undefined;
afterEach(async () => {
  await fixture?.sf.stop();
  fixture = undefined;
  scripted?.closeAllConnections();
  await new Promise((resolve) => (scripted ? scripted.close(resolve) : resolve(undefined)));
  scripted = undefined;
});

/** `count` distinct cases, ids `crm-1` … */
const cases = (count: number, from = 1): BatchItem<CaseRecord>[] =>
  Array.from({ length: count }, (_, index) => ({ id: `crm-${from + index}`, record: fullCase() }));

const kinds = (outcomes: Map<string, { kind: string }>): Record<string, string> =>
  Object.fromEntries([...outcomes].map(([id, outcome]) => [id, outcome.kind]));

const lockedRow = [
  {
    message: 'unable to obtain exclusive access to this record',
    errorCode: 'UNABLE_TO_LOCK_ROW',
    fields: [],
  },
];

describe('CRM Collections: per-record results', () => {
  it('decides each case by its own result: delivered, refused, locked row', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    const items = [
      ...cases(2),
      { id: 'crm-bad', record: fullCase({ email: 'aroha.ngata' }) },
      ...cases(1, 4),
    ];
    sf.inject({ on: 'collections', recordErrors: { 3: lockedRow } });

    // Act
    const { outcomes, apiUsage } = await crm.upsertCases(items);

    // Assess
    expect(kinds(outcomes)).toEqual({
      'crm-1': 'delivered',
      'crm-2': 'delivered',
      'crm-bad': 'permanent',
      'crm-4': 'transient',
    });
    expect(outcomes.get('crm-1')).toEqual({
      kind: 'delivered',
      status: 200,
      downstreamId: '500SB0000000001AAA',
      reachedDownstream: true,
    });
    expect(outcomes.get('crm-bad')).toEqual({
      kind: 'permanent',
      error: 'Web Email: invalid email address: [redacted]',
      reachedDownstream: true,
    });
    expect(outcomes.get('crm-4')).toEqual({
      kind: 'transient',
      error: 'HTTP 400: UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record',
      reachedDownstream: true,
    });
    for (const value of PERSONAL_VALUES) expect(JSON.stringify([...outcomes])).not.toContain(value);
    expect(sf.cases.map((stored) => stored.externalId)).toEqual(['crm-1', 'crm-2']);
    expect(requestLines(sf)).toEqual([`POST ${TOKEN} 200`, `PATCH ${COLLECTIONS} 200`]);
    expect(apiUsage).toEqual({ used: 1, allowed: 115_000 });
  });

  it('sends allOrNone false and each record with its type, external id and the single upsert body', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;

    // Act
    await crm.upsertCases(cases(2));

    // Assess
    const body = JSON.parse(sf.requests.at(-1)?.body ?? '');
    expect(body).toEqual({
      allOrNone: false,
      records: [1, 2].map((n) => ({
        attributes: { type: 'Case' },
        Web_Case_Id__c: `crm-${n}`,
        ...fullCaseSalesforceBody,
      })),
    });
    expect(sf.requests.at(-1)?.headers.authorization).toMatch(/^Bearer 00DSB/);
  });

  it('sends a case listed twice once, and a lone one by the single upsert', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    const [one] = cases(1);

    // Act
    const { outcomes, apiUsage } = await crm.upsertCases([one, one]);

    // Assess
    expect(kinds(outcomes)).toEqual({ 'crm-1': 'delivered' });
    expect(requestLines(sf)).toEqual([
      `POST ${TOKEN} 200`,
      'PATCH /services/data/v66.0/sobjects/Case/Web_Case_Id__c/crm-1 201',
    ]);
    expect(apiUsage).toEqual({ used: 1, allowed: 115_000 });
    expect(crm.latestApiUsage()).toEqual({ used: 1, allowed: 115_000 });
  });

  it(`sends the largest call, ${MAX_COLLECTION_SIZE} cases, as one Collections call; more are refused`, async () => {
    // Prepare
    fixture = await startCrm({ timeoutMs: 10_000 });
    const { sf, crm } = fixture;

    // Act
    const { outcomes, apiUsage } = await crm.upsertCases(cases(MAX_COLLECTION_SIZE));
    const tooMany = crm.upsertCases(cases(MAX_COLLECTION_SIZE + 1));

    // Assess (the worker slices a batch into calls of callSize: tests/delivery/batching.test.ts)
    await expect(tooMany).rejects.toThrow(RangeError);
    expect(new Set(Object.values(kinds(outcomes)))).toEqual(new Set(['delivered']));
    expect(outcomes.size).toBe(MAX_COLLECTION_SIZE);
    const calls = (await fetch(`${sf.url}/_sandbox/calls`).then((response) => response.json())) as {
      cases: number;
    }[];
    expect(calls.map((call) => call.cases)).toEqual([200]);
    expect(sf.cases).toHaveLength(MAX_COLLECTION_SIZE);
    expect(apiUsage).toEqual({ used: 1, allowed: 115_000 });
  });

  it('reports the usage Salesforce states, used close to the allowance too', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    sf.apiUsage.set({ used: 91_999 });

    // Act
    const { apiUsage } = await crm.upsertCases(cases(2));

    // Assess
    expect(apiUsage).toEqual({ used: 92_000, allowed: 115_000 });
  });
});

describe('CRM Collections: failures of the whole call', () => {
  for (const status of [503, 403, 500]) {
    it(`makes every case transient on a whole-call ${status}, storing nothing`, async () => {
      // Prepare
      fixture = await startCrm();
      const { sf, crm } = fixture;
      sf.inject({ on: 'collections', status });

      // Act
      const { outcomes, apiUsage } = await crm.upsertCases(cases(3));

      // Assess
      expect(outcomes.size).toBe(3);
      for (const outcome of outcomes.values()) {
        expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
        expect(outcome.kind === 'transient' && outcome.error).toMatch(
          new RegExp(`^HTTP ${status} to the whole Collections call`),
        );
      }
      expect(sf.cases).toHaveLength(0);
      expect(apiUsage).toEqual({ used: 1, allowed: 115_000 });
    });
  }

  it('gets a new token once on 401 INVALID_SESSION_ID and repeats the call', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    await crm.upsertCases(cases(1, 9));
    sf.expireTokens();

    // Act
    const { outcomes } = await crm.upsertCases(cases(2));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'crm-1': 'delivered', 'crm-2': 'delivered' });
    expect(requestLines(sf).slice(2)).toEqual([
      `PATCH ${COLLECTIONS} 401`,
      `POST ${TOKEN} 200`,
      `PATCH ${COLLECTIONS} 200`,
    ]);
  });

  it('makes every case transient when a new token is refused at once', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    sf.inject({ on: 'collections', status: 401 }, { on: 'collections', status: 401 });

    // Act
    const { outcomes } = await crm.upsertCases(cases(2));

    // Assess
    for (const outcome of outcomes.values()) {
      expect(outcome).toEqual({
        kind: 'transient',
        error: 'HTTP 401: INVALID_SESSION_ID again right after a new token was issued',
        reachedDownstream: true,
        wholeCall: true,
      });
    }
  });

  it('repeats safely after a lost answer: the upsert by external id updates, never duplicates', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    sf.inject({ on: 'collections', dropAnswer: true });

    // Act
    const lost = await crm.upsertCases(cases(3));
    const repeated = await crm.upsertCases(cases(3));

    // Assess
    for (const outcome of lost.outcomes.values())
      expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: false });
    expect(kinds(repeated.outcomes)).toEqual({
      'crm-1': 'delivered',
      'crm-2': 'delivered',
      'crm-3': 'delivered',
    });
    expect(sf.cases.map((stored) => stored.externalId)).toEqual(['crm-1', 'crm-2', 'crm-3']);
  });
});

/** A stand-in org whose Collections answers are scripted (token requests get a token). */
async function scriptedCrm(
  answer: (res: ServerResponse) => void,
): Promise<ReturnType<typeof createCrmClient>> {
  scripted = createServer(async (req, res) => {
    await readBody(req);
    if (req.url === TOKEN) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 't' }));
      return;
    }
    answer(res);
  });
  await new Promise<void>((resolve) => scripted?.listen(0, '127.0.0.1', resolve));
  const { port } = scripted.address() as AddressInfo;
  return createCrmClient({
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: 'i',
    clientSecret: 's',
    timeoutMs: 2000,
  });
}

const ok = (id: string) => ({ id, success: true, created: true, errors: [] });
const answer200 = (results: unknown) => (res: ServerResponse) =>
  res
    .writeHead(200, {
      'content-type': 'application/json',
      'sforce-limit-info': 'api-usage=7/100; per-app-api-usage=2/50(appName=x)',
    })
    .end(JSON.stringify(results));

describe('CRM Collections: malformed answers never deliver by guess', () => {
  it('reads a well-formed scripted answer result by result (the control for the cases below)', async () => {
    // Prepare
    const crm = await scriptedCrm(
      answer200([
        ok('500A'),
        { success: false, errors: [{ statusCode: 'INVALID_FIELD', message: 'no' }] },
        ok('500C'),
      ]),
    );

    // Act
    const { outcomes, apiUsage } = await crm.upsertCases(cases(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'crm-1': 'delivered', 'crm-2': 'permanent', 'crm-3': 'delivered' });
    expect(apiUsage).toEqual({ used: 7, allowed: 100 });
  });

  it('makes every case transient when the results array is shorter than the request', async () => {
    // Prepare
    const crm = await scriptedCrm(answer200([ok('500A'), ok('500B')]));

    // Act
    const { outcomes } = await crm.upsertCases(cases(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'crm-1': 'transient', 'crm-2': 'transient', 'crm-3': 'transient' });
    expect(outcomes.get('crm-1')).toMatchObject({
      error: 'HTTP 200 to the Collections call, but the answer has 2 results for 3 records',
      reachedDownstream: true,
    });
  });

  it('makes every case transient when the results array is longer or not an array', async () => {
    for (const results of [[ok('500A'), ok('500B'), ok('500C')], { id: '500A', success: true }]) {
      // Prepare
      scripted?.closeAllConnections();
      await new Promise((resolve) => (scripted ? scripted.close(resolve) : resolve(undefined)));
      const crm = await scriptedCrm(answer200(results));

      // Act
      const { outcomes } = await crm.upsertCases(cases(2));

      // Assess
      expect(kinds(outcomes)).toEqual({ 'crm-1': 'transient', 'crm-2': 'transient' });
    }
  });

  it('makes only an unreadable result or a failure without errors transient', async () => {
    // Prepare
    const crm = await scriptedCrm(answer200([ok('500A'), 'garbage', { success: false, errors: [] }]));

    // Act
    const { outcomes } = await crm.upsertCases(cases(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'crm-1': 'delivered', 'crm-2': 'transient', 'crm-3': 'transient' });
  });
  it('makes every case transient, as attempted, when the connection drops in the middle of the answer', async () => {
    // Prepare
    const crm = await scriptedCrm((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
      res.write(JSON.stringify([ok('500A'), ok('500B')]).slice(0, 60));
      setTimeout(() => res.socket?.destroy(), 20);
    });

    // Act
    const { outcomes } = await crm.upsertCases(cases(2));

    // Assess
    for (const outcome of outcomes.values()) {
      expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
    }
  });
});

describe('parseApiUsage', () => {
  it('reads api-usage, not per-app-api-usage, and nothing from a header without it', () => {
    // Act / Assess
    expect(parseApiUsage('api-usage=25/15000; per-app-api-usage=17/250(appName=sample)')).toEqual({
      used: 25,
      allowed: 15000,
    });
    expect(parseApiUsage('per-app-api-usage=17/250(appName=sample)')).toBeUndefined();
    expect(parseApiUsage('api-usage=1/0')).toBeUndefined();
    expect(parseApiUsage(null)).toBeUndefined();
  });
});
