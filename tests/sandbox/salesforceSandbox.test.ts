import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';

let sf: SalesforceSandbox;
beforeEach(async () => {
  sf = await startSalesforceSandbox();
});
afterEach(() => sf.stop());

const requestToken = (overrides: Record<string, string> = {}) =>
  fetch(`${sf.url}/services/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sf.clientId,
      client_secret: sf.clientSecret,
      ...overrides,
    }),
  });

const accessToken = async () =>
  ((await (await requestToken()).json()) as { access_token: string }).access_token;

const upsert = async (externalId: string, body: unknown, token?: string, field = 'Web_Case_Id__c') => {
  const response = await fetch(`${sf.url}/services/data/v66.0/sobjects/Case/${field}/${externalId}`, {
    method: 'PATCH',
    headers: {
      Authorization: `Bearer ${token ?? (await accessToken())}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

const validCase = { SuppliedEmail: 'ann@example.com', SuppliedName: 'Ann Lee', Privacy_Consent__c: true };

describe('Salesforce sandbox protocol', () => {
  it('issues a token naming itself as instance_url', async () => {
    // Act
    const response = await requestToken();

    // Assess
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      access_token: expect.stringMatching(/^00DSB0000000001!/),
      instance_url: sf.url,
      token_type: 'Bearer',
    });
  });

  it.each([
    [{ client_secret: 'wrong' }, 'invalid_client'],
    [{ client_id: 'wrong' }, 'invalid_client'],
    [{ grant_type: 'password' }, 'unsupported_grant_type'],
  ])('refuses a token request with %o: 400 %s', async (change, error) => {
    // Act
    const response = await requestToken(change);

    // Assess
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error });
  });

  it('creates with 201 and updates an existing external id with 200 created false', async () => {
    // Prepare
    const token = await accessToken();

    // Act
    const created = await upsert('web-1', validCase, token);
    const updated = await upsert('web-1', { Description: 'more' }, token);

    // Assess
    expect(created).toEqual({
      status: 201,
      body: { id: '500SB0000000001AAA', success: true, errors: [], created: true },
    });
    expect(updated).toEqual({
      status: 200,
      body: { id: '500SB0000000001AAA', success: true, errors: [], created: false },
    });
    expect(sf.cases).toHaveLength(1);
    expect(sf.cases[0].fields).toEqual({ ...validCase, Description: 'more' });
  });

  it('refuses an unknown or expired token with 401 INVALID_SESSION_ID', async () => {
    // Prepare
    const token = await accessToken();
    sf.expireTokens();

    // Act
    const expired = await upsert('web-1', validCase, token);
    const unknown = await upsert('web-1', validCase, 'not-a-token');

    // Assess
    for (const answer of [expired, unknown]) {
      expect(answer).toEqual({
        status: 401,
        body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID', fields: [] }],
      });
    }
  });

  it.each([
    [
      { ...validCase, Colour__c: 'red' },
      "No such column 'Colour__c' on sobject of type Case",
      'INVALID_FIELD',
    ],
    [{ SuppliedName: 'Ann' }, 'Required fields are missing: [SuppliedEmail]', 'REQUIRED_FIELD_MISSING'],
    [
      { SuppliedEmail: 'ann-at-example' },
      'Web Email: invalid email address: ann-at-example',
      'INVALID_EMAIL_ADDRESS',
    ],
    [
      { ...validCase, Privacy_Consent__c: 'yes' },
      /^Cannot deserialize instance of boolean from VALUE_STRING/,
      'JSON_PARSER_ERROR',
    ],
    [{ ...validCase, Web_Case_Id__c: 'web-1' }, /external id of this upsert/, 'INVALID_FIELD'],
    [
      { ...validCase, SuppliedPhone: '0'.repeat(41) },
      /data value too large: 0+ \(max length=40\)$/,
      'STRING_TOO_LONG',
    ],
  ])('refuses %o with 400 %s', async (body, message, errorCode) => {
    // Act
    const answer = await upsert('web-1', body);

    // Assess
    expect(answer.status).toBe(400);
    const expected = typeof message === 'string' ? message : expect.stringMatching(message);
    expect(answer.body).toEqual([{ message: expected, errorCode, fields: expect.any(Array) }]);
    expect(sf.cases).toHaveLength(0);
  });

  it('answers 404 for another external id field', async () => {
    // Act
    const answer = await upsert('web-1', validCase, undefined, 'Other_Id__c');

    // Assess
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject([{ errorCode: 'NOT_FOUND' }]);
  });

  it('answers a real 300 with the URLs of the matching cases, and faults in order', async () => {
    // Prepare
    const token = await accessToken();
    sf.inject({ status: 300 }, { status: 403 }, { on: 'token', status: 503 });

    // Act
    const multiple = await upsert('web-1', validCase, token);
    const limited = await upsert('web-1', validCase, token);
    const tokenFailure = await requestToken();

    // Assess
    expect(multiple.status).toBe(300);
    expect(multiple.body).toEqual([
      expect.stringMatching(/^\/services\/data\/v66\.0\/sobjects\/Case\/500/),
      expect.any(String),
    ]);
    expect(limited).toEqual({
      status: 403,
      body: [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED', fields: [] }],
    });
    expect(tokenFailure.status).toBe(503);
  });

  it('upserts a case whose answer it loses: the connection closes, the log says 201', async () => {
    // Prepare
    const token = await accessToken();
    sf.inject({ loseAnswer: true });

    // Act
    const lost = await upsert('web-lost', validCase, token).catch((error: Error) => error);

    // Assess
    expect(lost).toBeInstanceOf(Error);
    expect(sf.cases.map((stored) => stored.externalId)).toEqual(['web-lost']);
    expect(sf.requests.at(-1)?.status).toBe(201);
  });

  it('lists cases on /_sandbox/cases', async () => {
    // Prepare
    await upsert('web-1', validCase);

    // Act
    const listed = await fetch(`${sf.url}/_sandbox/cases`).then((response) => response.json());

    // Assess
    expect(listed).toMatchObject([{ id: '500SB0000000001AAA', externalId: 'web-1', fields: validCase }]);
  });
});
