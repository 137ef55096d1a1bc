/**
 * The sandboxes' outage and API usage controls (`/_sandbox/outage`, `/_sandbox/api-usage`) as real HTTP servers,
 * and the adapters meeting them: while down every business request is answered 503 and counted, and the
 * Salesforce sandbox reports its API usage on every REST API answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { minimalCase, startCrm } from '../crm/fixtures.ts';
import { registration, startErp } from '../erp/fixtures.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const control = async (url: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

describe('the SAP sandbox down and up', () => {
  it('answers every service request 503 while down, counts them, stores nothing; delivers again once up', async () => {
    // Prepare
    const { sap, erp } = await startErp();
    stops.push(() => sap.stop());
    // Act
    const switched = await control(sap.url, '/_sandbox/outage', { down: true });
    const whileDown = await erp.deliverSalesRegistration(registration(), 'reg-0001');
    const counted = await control(sap.url, '/_sandbox/outage');
    const registrationsWhileDown = await control(sap.url, '/_sandbox/registrations');
    await control(sap.url, '/_sandbox/outage', { down: false });
    const afterOutage = await erp.deliverSalesRegistration(registration(), 'reg-0001');
    const afterwards = await control(sap.url, '/_sandbox/outage');
    // Assess: the adapter met 503 on its token fetch (no delivery call), a transient failure.
    expect(switched).toEqual({
      status: 200,
      body: { down: true, since: expect.any(String), callsWhileDown: 0, deliveryCallsWhileDown: 0 },
    });
    expect(whileDown).toMatchObject({ kind: 'transient', reachedDownstream: false });
    expect(counted.body).toMatchObject({ down: true, callsWhileDown: 1, deliveryCallsWhileDown: 0 });
    expect(registrationsWhileDown).toEqual({ status: 200, body: [] });
    expect(afterOutage).toMatchObject({ kind: 'delivered', downstreamId: '49000001' });
    // The last outage's counts stay readable after it.
    expect(afterwards.body).toEqual({ down: false, callsWhileDown: 1, deliveryCallsWhileDown: 0 });
    expect(sap.outage.isDown()).toBe(false);
  });

  it('counts delivery POSTs apart from token fetches, and starts new counts with the next outage', async () => {
    // Prepare: a session fetched before the outage, so the adapter's next call is the delivery POST itself.
    const { sap, erp } = await startErp();
    stops.push(() => sap.stop());
    await erp.deliverSalesRegistration(registration({ FrameNum: 'FRAME-A' }), 'reg-a');
    sap.outage.setDown(true);
    // Act
    const outcome = await erp.deliverSalesRegistration(registration({ FrameNum: 'FRAME-B' }), 'reg-b');
    const first = sap.outage.state();
    sap.outage.setDown(false);
    sap.outage.setDown(true);
    const second = sap.outage.state();
    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
    expect(first).toMatchObject({ callsWhileDown: 1, deliveryCallsWhileDown: 1 });
    expect(second).toMatchObject({ down: true, callsWhileDown: 0, deliveryCallsWhileDown: 0 });
    expect(sap.registrations.map((r) => r.RegistrationId)).toEqual(['reg-a']);
  });

  it.each([
    [{ down: 'yes' }, 'field down: must be true or false'],
    [{}, 'field down: must be true or false'],
    ['[true]', 'field down: must be true or false'],
  ])('refuses the switch %o with 400 naming the field, and stays up', async (body, error) => {
    // Prepare
    const { sap } = await startErp();
    stops.push(() => sap.stop());
    // Act
    const answer = await control(sap.url, '/_sandbox/outage', body);
    // Assess
    expect(answer).toEqual({ status: 400, body: { error } });
    expect(sap.outage.isDown()).toBe(false);
  });
});

describe('the Salesforce sandbox down and up, and its API usage', () => {
  it('answers the token endpoint and upserts 503 while down, counting them; upserts again once up', async () => {
    // Prepare
    const { sf, crm } = await startCrm();
    stops.push(() => sf.stop());
    // Act
    await control(sf.url, '/_sandbox/outage', { down: true });
    const whileDown = await crm.upsertCase(minimalCase(), 'case-1');
    const counted = sf.outage.state();
    await control(sf.url, '/_sandbox/outage', { down: false });
    const afterOutage = await crm.upsertCase(minimalCase(), 'case-1');
    // Assess
    expect(whileDown).toMatchObject({ kind: 'transient' });
    expect(counted).toMatchObject({ down: true, callsWhileDown: 1, deliveryCallsWhileDown: 0 });
    expect(afterOutage).toMatchObject({ kind: 'delivered' });
    expect(sf.cases).toHaveLength(1);
  });

  it('reports the usage it was set to on every REST API answer, each call counting one; the token endpoint does not count', async () => {
    // Prepare
    const { sf, crm } = await startCrm();
    stops.push(() => sf.stop());
    const set = await control(sf.url, '/_sandbox/api-usage', { used: 79, allowed: 100 });
    // Act
    await crm.upsertCase(minimalCase(), 'case-1');
    await crm.upsertCase(minimalCase(), 'case-2');
    const usage = await control(sf.url, '/_sandbox/api-usage');
    // Assess
    expect(set).toEqual({ status: 200, body: { used: 79, allowed: 100 } });
    const calls = sf.requests
      .filter((r) => r.path.startsWith('/services/'))
      .map((r) => `${r.method} ${r.path.split('/').slice(0, 3).join('/')}`);
    expect(calls).toEqual(['POST /services/oauth2', 'PATCH /services/data', 'PATCH /services/data']);
    expect(usage.body).toEqual({ used: 81, allowed: 100 });
    // Raw answers: the token endpoint's carries no usage, an upsert's and a refusal's do.
    const token = await fetch(`${sf.url}/services/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sf.clientId,
        client_secret: sf.clientSecret,
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const caseUrl = `${sf.url}/services/data/v66.0/sobjects/Case/Web_Case_Id__c/case-3`;
    const created = await fetch(caseUrl, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        SuppliedEmail: 'ann@example.com',
        SuppliedName: 'Ann Lee',
        Privacy_Consent__c: true,
      }),
    });
    const refused = await fetch(caseUrl, { method: 'PATCH' });
    expect(token.headers.get('sforce-limit-info')).toBeNull();
    expect([created.status, created.headers.get('sforce-limit-info')]).toEqual([201, 'api-usage=82/100']);
    expect([refused.status, refused.headers.get('sforce-limit-info')]).toEqual([401, 'api-usage=83/100']);
  });

  it.each([
    [{ used: -1 }, 'field used: must be a whole number of at least 0'],
    [{ used: 1.5 }, 'field used: must be a whole number of at least 0'],
    [{ allowed: 0 }, 'field allowed: must be a whole number of at least 1'],
    ['"80%"', 'the body must be a JSON object'],
  ])('refuses the usage %o with 400 naming the field, and keeps the usage', async (body, error) => {
    // Prepare
    const { sf } = await startCrm();
    stops.push(() => sf.stop());
    // Act
    const answer = await control(sf.url, '/_sandbox/api-usage', body);
    // Assess
    expect(answer).toEqual({ status: 400, body: { error } });
    expect(sf.apiUsage.state()).toEqual({ used: 0, allowed: 115_000 });
  });
});
