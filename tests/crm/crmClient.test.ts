import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CrmConfigError, createCrmClient } from '../../lib/downstream/crm/index.ts';
import { startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import {
  type CrmFixture,
  fullCase,
  fullCaseSalesforceBody,
  minimalCase,
  requestLines,
  startCrm,
  TOKEN,
  upsertPath,
} from './fixtures.ts';

let fixture: CrmFixture | undefined;
afterEach(async () => {
  await fixture?.sf.stop();
  fixture = undefined;
});

describe('CRM adapter: upsert', () => {
  it('creates the case under its CrmId and reports the Salesforce id', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;

    // Act
    const outcome = await crm.upsertCase(fullCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '500SB0000000001AAA',
      reachedDownstream: true,
    });
    expect(requestLines(sf)).toEqual([`POST ${TOKEN} 200`, `PATCH ${upsertPath('case-0001')} 201`]);
    const patch = sf.requests[1];
    expect(patch.headers.authorization).toMatch(/^Bearer 00DSB0000000001!/);
    expect(patch.headers['content-type']).toBe('application/json');
    expect(sf.cases).toMatchObject([
      { externalId: 'case-0001', fields: { SuppliedEmail: 'aroha.ngata@example.org' } },
    ]);
  });

  it('sends the body of the default mapping, booleans as JSON booleans, without the external id', async () => {
    // Prepare
    fixture = await startCrm();

    // Act
    await fixture.crm.upsertCase(fullCase(), 'case-0001');

    // Assess
    expect(JSON.parse(fixture.sf.requests[1].body)).toStrictEqual(fullCaseSalesforceBody);
  });

  it('leaves absent fields out of the body and falls back to homePhone for SuppliedPhone', async () => {
    // Prepare
    fixture = await startCrm();

    // Act
    await fixture.crm.upsertCase(minimalCase({ homePhone: '09 555 0123' }), 'case-0001');

    // Assess
    expect(JSON.parse(fixture.sf.requests[1].body)).toStrictEqual({
      SuppliedName: 'Aroha Ngata-Whitfield',
      SuppliedEmail: 'aroha.ngata@example.org',
      SuppliedPhone: '09 555 0123',
      Origin: 'Web',
      First_Name__c: 'Aroha',
      Last_Name__c: 'Ngata-Whitfield',
      Home_Phone__c: '09 555 0123',
    });
  });

  it('delivers a case with the longest names the API accepts, SuppliedName cut to its 80 characters', async () => {
    // Prepare
    fixture = await startCrm();
    const record = minimalCase({ firstName: 'F'.repeat(40), surname: 'S'.repeat(40) });

    // Act
    const outcome = await fixture.crm.upsertCase(record, 'case-0001');

    // Assess
    expect(outcome.kind).toBe('delivered');
    expect(fixture.sf.cases[0].fields.SuppliedName).toBe(`${'F'.repeat(40)} ${'S'.repeat(39)}`);
  });

  it('updates, never duplicates, the case when the same CrmId is delivered again', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    await crm.upsertCase(fullCase(), 'case-0001');

    // Act
    const repeat = await crm.upsertCase(fullCase(), 'case-0001');

    // Assess
    expect(repeat).toEqual({
      kind: 'delivered',
      status: 200,
      downstreamId: '500SB0000000001AAA',
      reachedDownstream: true,
    });
    expect(sf.cases).toHaveLength(1);
    expect(requestLines(sf).at(-1)).toBe(`PATCH ${upsertPath('case-0001')} 200`);
  });

  it('encodes the CrmId in the URL and uses the configured API version and external id field', async () => {
    // Prepare
    fixture = await startCrm(
      { apiVersion: 'v61.0', externalIdField: 'External_Case_Key__c' },
      { externalIdField: 'External_Case_Key__c' },
    );

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'web/42 ä?');

    // Assess
    expect(outcome.kind).toBe('delivered');
    expect(fixture.sf.requests[1].path).toBe(upsertPath('web/42 ä?', 'External_Case_Key__c', 'v61.0'));
    expect(fixture.sf.cases[0].externalId).toBe('web/42 ä?');
  });

  it('is delivered without an id when a 2xx body is not JSON', async () => {
    // Prepare
    fixture = await startCrm();
    fixture.sf.inject({ malformedBody: true });

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({ kind: 'delivered', status: 201, reachedDownstream: true });
    expect(fixture.sf.cases).toHaveLength(1);
  });

  it('refuses a mapping that writes the external id field', async () => {
    // Act
    const create = () =>
      createCrmClient({
        baseUrl: 'https://example.my.salesforce.com',
        clientId: 'id',
        clientSecret: 'secret',
        mapping: { Web_Case_Id__c: { field: 'email' } },
      });

    // Assess
    expect(create).toThrow(CrmConfigError);
    expect(create).toThrow('case mapping writes Web_Case_Id__c');
  });
});

describe('CRM adapter: access token', () => {
  it('requests a token with client credentials once and reuses it', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;

    // Act
    await crm.upsertCase(minimalCase(), 'case-0001');
    await crm.upsertCase(minimalCase(), 'case-0002');

    // Assess
    expect(requestLines(sf)).toEqual([
      `POST ${TOKEN} 200`,
      `PATCH ${upsertPath('case-0001')} 201`,
      `PATCH ${upsertPath('case-0002')} 201`,
    ]);
    const form = new URLSearchParams(sf.requests[0].body);
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: sf.clientId,
      client_secret: sf.clientSecret,
    });
    expect(sf.requests[0].headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(sf.requests[1].headers.authorization).toBe(sf.requests[2].headers.authorization);
  });

  it('shares one token request between concurrent upserts', async () => {
    // Prepare
    fixture = await startCrm();

    // Act
    const outcomes = await Promise.all(
      [1, 2, 3].map((n) => fixture?.crm.upsertCase(minimalCase(), `case-${n}`)),
    );

    // Assess
    expect(outcomes.map((outcome) => outcome?.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(fixture.sf.requests.filter((request) => request.path === TOKEN)).toHaveLength(1);
  });

  it('sends the upsert to the instance_url of the token answer', async () => {
    // Prepare: a login host that hands out tokens of another server, the instance, and names it
    const instance = await startSalesforceSandbox();
    const login = createServer(async (_request, response) => {
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: instance.clientId,
        client_secret: instance.clientSecret,
      });
      const answer = await fetch(`${instance.url}${TOKEN}`, { method: 'POST', body: form });
      const issued = (await answer.json()) as { access_token: string };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: issued.access_token, instance_url: `${instance.url}/` }));
    });
    await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
    const loginUrl = `http://127.0.0.1:${(login.address() as AddressInfo).port}`;
    const crm = createCrmClient({ baseUrl: loginUrl, clientId: 'id', clientSecret: 'secret' });

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0001');
    login.closeAllConnections();
    await Promise.all([instance.stop(), new Promise((resolve) => login.close(resolve))]);

    // Assess
    expect(outcome.kind).toBe('delivered');
    expect(instance.cases).toHaveLength(1);
    expect(instance.requests.at(-1)?.path).toBe(upsertPath('case-0001'));
  });

  it('fetches a new token once and repeats the upsert when the token expired', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    await crm.upsertCase(minimalCase(), 'case-0001');
    sf.expireTokens();

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0002');

    // Assess
    expect(outcome).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '500SB0000000002AAA',
      reachedDownstream: true,
    });
    expect(requestLines(sf).slice(2)).toEqual([
      `PATCH ${upsertPath('case-0002')} 401`,
      `POST ${TOKEN} 200`,
      `PATCH ${upsertPath('case-0002')} 201`,
    ]);
    expect(sf.requests[4].headers.authorization).not.toBe(sf.requests[2].headers.authorization);
  });

  it('gives up as transient, without looping, when the new token is refused too', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    sf.inject({ status: 401 }, { status: 401 });

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
    expect(requestLines(sf)).toEqual([
      `POST ${TOKEN} 200`,
      `PATCH ${upsertPath('case-0001')} 401`,
      `POST ${TOKEN} 200`,
      `PATCH ${upsertPath('case-0001')} 401`,
    ]);
  });

  it('treats a 401 other than INVALID_SESSION_ID as transient without a new token', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    sf.inject({ status: 401, errors: [{ message: 'Org is locked', errorCode: 'ORG_LOCKED', fields: [] }] });

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'HTTP 401: ORG_LOCKED: Org is locked',
      reachedDownstream: true,
    });
    expect(sf.requests.filter((request) => request.path === TOKEN)).toHaveLength(1);
  });

  it('is transient without reaching Salesforce when the client credentials are refused (may be rotating)', async () => {
    // Prepare
    fixture = await startCrm({ clientSecret: 'old-secret' });

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'token request failed: HTTP 400 invalid_client',
      reachedDownstream: false,
    });
    expect(requestLines(fixture.sf)).toEqual([`POST ${TOKEN} 400`]);
  });

  it.each([
    [{ on: 'token' as const, status: 503 }, 'token request failed: HTTP 503 unknown_error'],
    [
      { on: 'token' as const, status: 200, malformedBody: true },
      'token request failed: no access_token in the answer',
    ],
    [{ on: 'token' as const, dropConnection: true }, /^token request failed: network error: /],
    [{ on: 'token' as const, delayMs: 1000 }, 'token request failed: timed out after 200 ms'],
  ])('is transient without reaching Salesforce when the token request fails: %o', async (fault, error) => {
    // Prepare
    fixture = await startCrm({ timeoutMs: 200 });
    fixture.sf.inject(fault);

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: expect.stringMatching(error),
      reachedDownstream: false,
    });
    expect(fixture.sf.requests.filter((request) => request.method === 'PATCH')).toHaveLength(0);
  });

  it('asks for a token again on the next upsert after a failed token request', async () => {
    // Prepare
    fixture = await startCrm();
    fixture.sf.inject({ on: 'token', status: 503 });
    await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome.kind).toBe('delivered');
  });

  it('is transient, but counted as an attempt, when the new token after an expired one is refused', async () => {
    // Prepare
    fixture = await startCrm();
    const { sf, crm } = fixture;
    await crm.upsertCase(minimalCase(), 'case-0001');
    sf.inject({ status: 401 }, { on: 'token', status: 500 });

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0002');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'token request failed: HTTP 500 unknown_error (token refused)',
      reachedDownstream: true,
    });
  });
});

describe('CRM adapter: timeouts and network errors', () => {
  it('is transient and counted as an attempt when the upsert times out', async () => {
    // Prepare
    fixture = await startCrm({ timeoutMs: 200 });
    fixture.sf.inject({ delayMs: 2000 });

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({ kind: 'transient', error: 'timed out after 200 ms', reachedDownstream: true });
  });

  it('updates the same case on the retry when Salesforce stored an upsert whose answer timed out', async () => {
    // Prepare
    fixture = await startCrm({ timeoutMs: 100 });
    const { sf, crm } = fixture;
    sf.inject({ delayMs: 300 });
    const timedOut = await crm.upsertCase(minimalCase(), 'case-0001');
    await vi.waitFor(() => expect(sf.cases).toHaveLength(1), { timeout: 2000 });

    // Act
    const retry = await crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(timedOut.kind).toBe('transient');
    expect(retry).toEqual({
      kind: 'delivered',
      status: 200,
      downstreamId: '500SB0000000001AAA',
      reachedDownstream: true,
    });
    expect(sf.cases).toHaveLength(1);
  });

  it('is transient without an attempt when the connection is dropped', async () => {
    // Prepare
    fixture = await startCrm();
    fixture.sf.inject({ dropConnection: true });

    // Act
    const outcome = await fixture.crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: false });
    expect(outcome.kind !== 'delivered' && outcome.error).toMatch(/^network error: /);
  });

  it('is transient without an attempt when Salesforce is down', async () => {
    // Prepare
    const sf = await startSalesforceSandbox();
    await sf.stop();
    const crm = createCrmClient({ baseUrl: sf.url, clientId: sf.clientId, clientSecret: sf.clientSecret });

    // Act
    const outcome = await crm.upsertCase(minimalCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'token request failed: network error: ECONNREFUSED',
      reachedDownstream: false,
    });
  });
});
