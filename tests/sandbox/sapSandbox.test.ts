import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';

let sap: SapSandbox;
let auth: string;
const root = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/';
const entitySet = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';

beforeEach(async () => {
  sap = await startSapSandbox();
  auth = `Basic ${Buffer.from(`${sap.username}:${sap.password}`).toString('base64')}`;
});
afterEach(() => sap.stop());

const entity = (overrides: Record<string, unknown> = {}) => ({
  DealerId: 1234,
  FrameNum: 'FRAME-1',
  SaleDate: '2025-03-14',
  Name: 'Lee',
  Name2: 'Ann',
  Street: '1 Main St',
  email: 'ann@example.com',
  Phone: '0400 000 000',
  CommPriv: 'P',
  MoreInfo: 'N',
  AllowSharing: 'N',
  RegistrationId: 'reg-1',
  ...overrides,
});

/** Fetches a CSRF token the way a client must: token header plus the session cookies. */
const session = async () => {
  const response = await fetch(`${sap.url}${root}`, {
    headers: { Authorization: auth, 'X-CSRF-Token': 'Fetch' },
  });
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  return { token: response.headers.get('x-csrf-token') ?? '', cookie };
};

const post = async (body: unknown, headers: Record<string, string>) => {
  const response = await fetch(`${sap.url}${entitySet}`, {
    method: 'POST',
    headers: {
      Authorization: auth,
      'Content-Type': 'application/json',
      Accept: 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
};

const postWithSession = async (body: unknown) => {
  const { token, cookie } = await session();
  return post(body, { 'X-CSRF-Token': token, Cookie: cookie });
};

describe('SAP sandbox protocol', () => {
  it('asks for Basic authentication', async () => {
    // Act
    const response = await fetch(`${sap.url}${root}`, { headers: { 'X-CSRF-Token': 'Fetch' } });

    // Assess
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(response.headers.get('x-csrf-token')).toBeNull();
  });

  it('issues a CSRF token with a session cookie on the service root', async () => {
    // Act
    const response = await fetch(`${sap.url}${root}?sap-client=200`, {
      headers: { Authorization: auth, 'X-CSRF-Token': 'Fetch' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ d: { EntitySets: ['SalesRegistrationSet'] } });
    expect(response.headers.get('x-csrf-token')).toBeTruthy();
    expect(response.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^SAP_SESSIONID_SBX_100=[\w-]+; path=\/; HttpOnly$/),
      'sap-usercontext=sap-client=200; path=/',
    ]);
  });

  it.each([
    ['no token', () => ({})],
    ['a token without its cookie', async () => ({ 'X-CSRF-Token': (await session()).token })],
    [
      'a cookie of another session',
      async () => ({ 'X-CSRF-Token': (await session()).token, Cookie: (await session()).cookie }),
    ],
  ])('refuses a POST with %s: 403 X-CSRF-Token: Required', async (_case, headers) => {
    // Act
    const answer = await post(entity(), await headers());

    // Assess
    expect(answer.status).toBe(403);
    expect(answer.headers.get('x-csrf-token')).toBe('Required');
    expect(sap.registrations).toHaveLength(0);
  });

  it('creates a registration: 201 with the entity and its DocumentNumber', async () => {
    // Act
    const answer = await postWithSession(entity());

    // Assess
    expect(answer.status).toBe(201);
    expect(answer.json().d).toMatchObject({
      DocumentNumber: '49000001',
      RegistrationId: 'reg-1',
      FrameNum: 'FRAME-1',
    });
    expect(answer.headers.get('location')).toBe(`${sap.url}${entitySet}('49000001')`);
    expect(sap.registrations).toMatchObject([{ DocumentNumber: '49000001', RegistrationId: 'reg-1' }]);
  });

  it.each([
    [{ DealerId: '1234' }, "Invalid value for property 'DealerId': not an Edm.Int32"],
    [{ Phone: '  ' }, "Property 'Phone' is required"],
    [{ RegistrationId: undefined }, "Property 'RegistrationId' is required"],
    [{ Colour: 'red' }, "Property 'Colour' is invalid"],
    [{ DOB: '1990-02-30x' }, "Property 'DOB' is not a date in the format YYYY-MM-DD"],
    [{ CommPriv: 'Private' }, "Property 'CommPriv' must be C or P"],
  ])('refuses %o with 400 and an OData error', async (change, message) => {
    // Act
    const answer = await postWithSession(entity(change));

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({
      error: { code: 'ZSD_REG/001', message: { lang: 'en', value: message } },
    });
  });

  it('refuses a repeated RegistrationId with 409 naming it and its document, creating nothing', async () => {
    // Prepare
    await postWithSession(entity());

    // Act
    const repeat = await postWithSession(entity());

    // Assess
    expect(repeat.status).toBe(409);
    expect(repeat.json().error.message.value).toBe(
      'RegistrationId reg-1 already registered as document 49000001',
    );
    expect(sap.registrations).toHaveLength(1);
  });

  it('refuses with 409 a frame registered under another RegistrationId, or a RegistrationId reused for other content', async () => {
    // Prepare
    await postWithSession(entity());

    // Act
    const otherId = await postWithSession(entity({ RegistrationId: 'reg-2' }));
    const otherContent = await postWithSession(entity({ FrameNum: 'FRAME-2' }));

    // Assess
    expect(otherId.status).toBe(409);
    expect(otherId.json().error.message.value).toBe(
      'Frame number FRAME-1 is already registered (document 49000001)',
    );
    expect(otherContent.status).toBe(409);
    expect(otherContent.json().error.message.value).toBe(
      'RegistrationId reg-1 already registered as document 49000001 with different content',
    );
  });

  it('lists registrations as OData and as plain JSON', async () => {
    // Prepare
    await postWithSession(entity());

    // Act
    const odata = await fetch(`${sap.url}${entitySet}`, { headers: { Authorization: auth } }).then((r) =>
      r.json(),
    );
    const plain = await fetch(`${sap.url}/_sandbox/registrations`).then((r) => r.json());

    // Assess
    expect(odata).toMatchObject({ d: { results: [{ DocumentNumber: '49000001', FrameNum: 'FRAME-1' }] } });
    expect(plain).toMatchObject([{ DocumentNumber: '49000001', RegistrationId: 'reg-1' }]);
  });

  it('uses queued faults in order, one per POST, and csrf faults only on token fetches', async () => {
    // Prepare
    const { token, cookie } = await session();
    sap.inject({ status: 503, message: 'down' }, { on: 'csrf', status: 500 }, { csrfExpired: true });

    // Act
    const first = await post(entity(), { 'X-CSRF-Token': token, Cookie: cookie });
    const second = await post(entity(), { 'X-CSRF-Token': token, Cookie: cookie });
    const failedFetch = await fetch(`${sap.url}${root}`, {
      headers: { Authorization: auth, 'X-CSRF-Token': 'Fetch' },
    });
    const third = await postWithSession(entity());

    // Assess
    expect(first.status).toBe(503);
    expect(first.json().error.message.value).toBe('down');
    expect(second.status).toBe(403);
    expect(second.headers.get('x-csrf-token')).toBe('Required');
    expect(failedFetch.status).toBe(500);
    expect(third.status).toBe(201);
    expect(sap.requests.map((request) => request.status)).toEqual([200, 503, 403, 500, 200, 201]);
  });

  it('stores a registration whose answer it loses: the connection closes, the log says 201', async () => {
    // Prepare
    sap.inject({ loseAnswer: true });

    // Act
    const lost = await postWithSession(entity()).catch((error: Error) => error);

    // Assess
    expect(lost).toBeInstanceOf(Error);
    expect(sap.registrations).toHaveLength(1);
    expect(sap.requests.at(-1)?.status).toBe(201);
  });
});
