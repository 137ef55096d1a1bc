import { afterEach, describe, expect, it, vi } from 'vitest';
import { createErpClient } from '../../lib/downstream/erp/index.ts';
import { startSapSandbox } from '../../sandbox/sapSandbox.ts';
import {
  ENTITY_SET,
  type ErpFixture,
  registration,
  requestLines,
  SERVICE_ROOT,
  startErp,
} from './fixtures.ts';

let fixture: ErpFixture | undefined;
afterEach(async () => {
  await fixture?.sap.stop();
  fixture = undefined;
});

describe('ERP adapter: delivery', () => {
  it('posts the record plus RegistrationId and reports the document number', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    const record = registration();

    // Act
    const outcome = await erp.deliverSalesRegistration(record, 'reg-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '49000001',
      reachedDownstream: true,
    });
    const post = sap.requests.find((request) => request.method === 'POST');
    expect(JSON.parse(post?.body ?? '')).toEqual({ ...record, RegistrationId: 'reg-0001' });
    expect(post?.headers['content-type']).toBe('application/json');
    expect(post?.headers.accept).toBe('application/json');
    expect(sap.registrations).toHaveLength(1);
    expect(sap.registrations[0].entity.DealerId).toBe(1234);
    expect(sap.registrations[0].entity.SaleDate).toBe('2025-03-14');
  });

  it('sends Basic authentication on the token fetch and on the POST', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    const expected = `Basic ${Buffer.from(`${sap.username}:${sap.password}`).toString('base64')}`;

    // Act
    await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(sap.requests.map((request) => request.headers.authorization)).toEqual([expected, expected]);
  });

  it('sends sap-client on every request when set, and no query string otherwise', async () => {
    // Prepare
    fixture = await startErp({ sapClient: '300' });
    const withClient = fixture;
    const plain = await startErp();

    // Act
    await withClient.erp.deliverSalesRegistration(registration(), 'reg-0001');
    await plain.erp.deliverSalesRegistration(registration(), 'reg-0001');
    await plain.sap.stop();

    // Assess
    expect(withClient.sap.requests.map((request) => request.path)).toEqual([
      `${SERVICE_ROOT}?sap-client=300`,
      `${ENTITY_SET}?sap-client=300`,
    ]);
    expect(plain.sap.requests.map((request) => request.path)).toEqual([SERVICE_ROOT, ENTITY_SET]);
  });

  it('keeps a path prefix and tolerates a trailing slash in the base URL', async () => {
    // Prepare
    const sap = await startSapSandbox({ servicePath: '/erp/sap/opu/odata/sap/Z_SRV/RegSet' });
    const erp = createErpClient({
      baseUrl: `${sap.url}/erp/`,
      servicePath: '/sap/opu/odata/sap/Z_SRV/RegSet',
      username: sap.username,
      password: sap.password,
    });

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');
    await sap.stop();

    // Assess
    expect(outcome.kind).toBe('delivered');
    expect(sap.requests.map((request) => request.path)).toEqual([
      '/erp/sap/opu/odata/sap/Z_SRV/',
      '/erp/sap/opu/odata/sap/Z_SRV/RegSet',
    ]);
  });

  it('treats a repeat of a delivered RegistrationId as delivered, with the same document and no new record', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'delivered',
      status: 409,
      downstreamId: '49000001',
      reachedDownstream: true,
    });
    expect(sap.registrations).toHaveLength(1);
    expect(requestLines(sap).at(-1)).toBe(`POST ${ENTITY_SET} 409`);
  });

  it('is delivered without a document number when a 2xx body is not JSON', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ malformedBody: true });

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({ kind: 'delivered', status: 201, reachedDownstream: true });
    expect(sap.registrations).toHaveLength(1);
  });
});

describe('ERP adapter: CSRF token', () => {
  it('fetches one token and reuses it, with its cookies, for later deliveries', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;

    // Act
    await erp.deliverSalesRegistration(registration(), 'reg-0001');
    await erp.deliverSalesRegistration(registration({ FrameNum: 'JH2RC5000MK000002' }), 'reg-0002');

    // Assess
    expect(requestLines(sap)).toEqual([
      `GET ${SERVICE_ROOT} 200`,
      `POST ${ENTITY_SET} 201`,
      `POST ${ENTITY_SET} 201`,
    ]);
    const [fetch, ...posts] = sap.requests;
    expect(fetch.headers['x-csrf-token']).toBe('Fetch');
    for (const post of posts) {
      expect(post.headers['x-csrf-token']).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
      expect(post.headers.cookie).toMatch(/SAP_SESSIONID_SBX_100=[\w-]+/);
      expect(post.headers.cookie).toContain('sap-usercontext=sap-client=100');
    }
  });

  it('shares one token fetch between concurrent deliveries', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;

    // Act
    const outcomes = await Promise.all(
      [1, 2, 3].map((n) =>
        erp.deliverSalesRegistration(registration({ FrameNum: `FRAME-${n}` }), `reg-${n}`),
      ),
    );

    // Assess
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(sap.requests.filter((request) => request.method === 'GET')).toHaveLength(1);
  });

  it('fetches a new token once and repeats the POST when the token expired', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registration(), 'reg-0001');
    sap.expireCsrfTokens();

    // Act
    const outcome = await erp.deliverSalesRegistration(registration({ FrameNum: 'FRAME-2' }), 'reg-0002');

    // Assess
    expect(outcome).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '49000002',
      reachedDownstream: true,
    });
    expect(requestLines(sap).slice(2)).toEqual([
      `POST ${ENTITY_SET} 403`,
      `GET ${SERVICE_ROOT} 200`,
      `POST ${ENTITY_SET} 201`,
    ]);
    expect(sap.requests[4].headers['x-csrf-token']).not.toBe(sap.requests[2].headers['x-csrf-token']);
  });

  it('gives up as transient, without looping, when the new token is refused too', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ csrfExpired: true }, { csrfExpired: true });

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
    expect(requestLines(sap)).toEqual([
      `GET ${SERVICE_ROOT} 200`,
      `POST ${ENTITY_SET} 403`,
      `GET ${SERVICE_ROOT} 200`,
      `POST ${ENTITY_SET} 403`,
    ]);
    expect(sap.registrations).toHaveLength(0);
  });

  it('is transient without reaching the ERP when the token fetch is refused', async () => {
    // Prepare
    fixture = await startErp({ password: 'wrong' });
    const { sap, erp } = fixture;

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'CSRF token fetch failed: HTTP 401',
      reachedDownstream: false,
    });
    expect(requestLines(sap)).toEqual([`GET ${SERVICE_ROOT} 401`]);
  });

  it('is transient without reaching the ERP when the token fetch fails, and fetches again next time', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ on: 'csrf', status: 503 });

    // Act
    const first = await erp.deliverSalesRegistration(registration(), 'reg-0001');
    const second = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(first).toEqual({
      kind: 'transient',
      error: 'CSRF token fetch failed: HTTP 503',
      reachedDownstream: false,
    });
    expect(second.kind).toBe('delivered');
    expect(requestLines(sap)).toEqual([
      `GET ${SERVICE_ROOT} 503`,
      `GET ${SERVICE_ROOT} 200`,
      `POST ${ENTITY_SET} 201`,
    ]);
  });

  it('is transient without reaching the ERP when the token fetch times out', async () => {
    // Prepare
    fixture = await startErp({ timeoutMs: 100 });
    fixture.sap.inject({ on: 'csrf', delayMs: 1000 });

    // Act
    const outcome = await fixture.erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'CSRF token fetch failed: timed out after 100 ms',
      reachedDownstream: false,
    });
  });

  it('is transient, but counted as an attempt, when the refetch after a refused token fails', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registration(), 'reg-0001');
    sap.inject({ csrfExpired: true }, { on: 'csrf', status: 500 });

    // Act
    const outcome = await erp.deliverSalesRegistration(registration({ FrameNum: 'FRAME-2' }), 'reg-0002');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'CSRF token fetch failed: HTTP 500 (token refused)',
      reachedDownstream: true,
    });
  });
});

describe('ERP adapter: timeouts and network errors', () => {
  it('is transient and counted as an attempt when the POST times out', async () => {
    // Prepare
    fixture = await startErp({ timeoutMs: 200 });
    fixture.sap.inject({ delayMs: 2000 });

    // Act
    const started = Date.now();
    const outcome = await fixture.erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({ kind: 'transient', error: 'timed out after 200 ms', reachedDownstream: true });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('gets the same document on the retry when the ERP stored a registration whose answer timed out', async () => {
    // Prepare
    fixture = await startErp({ timeoutMs: 100 });
    const { sap, erp } = fixture;
    sap.inject({ delayMs: 300 });
    const timedOut = await erp.deliverSalesRegistration(registration(), 'reg-0001');
    await vi.waitFor(() => expect(sap.registrations).toHaveLength(1), { timeout: 2000 });

    // Act
    const retry = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(timedOut.kind).toBe('transient');
    expect(retry).toEqual({
      kind: 'delivered',
      status: 409,
      downstreamId: '49000001',
      reachedDownstream: true,
    });
    expect(sap.registrations).toHaveLength(1);
  });

  it('is transient without an attempt when the connection is dropped', async () => {
    // Prepare
    fixture = await startErp();
    fixture.sap.inject({ dropConnection: true });

    // Act
    const outcome = await fixture.erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: false });
    expect(outcome.kind !== 'delivered' && outcome.error).toMatch(/^network error: /);
  });

  it('is transient without an attempt when the ERP is down', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registration(), 'reg-0001');
    await sap.stop();

    // Act
    const outcome = await erp.deliverSalesRegistration(registration({ FrameNum: 'FRAME-2' }), 'reg-0002');

    // Assess: refused, or "other side closed" when the kept-alive connection is found dead first
    expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: false });
    expect(outcome.kind !== 'delivered' && outcome.error).toMatch(
      /^network error: (ECONNREFUSED|other side closed)$/,
    );
  });

  it('is transient without an attempt when nothing listens at all', async () => {
    // Prepare
    const sap = await startSapSandbox();
    const { url } = sap;
    await sap.stop();
    const erp = createErpClient({ baseUrl: url, servicePath: sap.servicePath, username: 'u', password: 'p' });

    // Act
    const outcome = await erp.deliverSalesRegistration(registration(), 'reg-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'transient',
      error: 'CSRF token fetch failed: network error: ECONNREFUSED',
      reachedDownstream: false,
    });
  });
});
