import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';

let sap: SapSandbox;
let auth: string;
const root = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/';

beforeEach(async () => {
  sap = await startSapSandbox();
  auth = `Basic ${Buffer.from(`${sap.username}:${sap.password}`).toString('base64')}`;
});
afterEach(() => sap.stop());

const entity = (n: number, overrides: Record<string, unknown> = {}) => ({
  DealerId: 1234,
  FrameNum: `FRAME-${n}`,
  SaleDate: '2025-03-14',
  Name: 'Lee',
  Name2: 'Ann',
  Street: '1 Main St',
  email: 'ann@example.com',
  Phone: '0400 000 000',
  CommPriv: 'P',
  RegistrationId: `reg-${n}`,
  ...overrides,
});

/** A `$batch` body written by hand (not by the adapter): one change set per entity. */
const batchBody = (entities: unknown[]) =>
  `${entities
    .map(
      (body, index) =>
        `--b\r\nContent-Type: multipart/mixed; boundary=cs${index}\r\n\r\n--cs${index}\r\nContent-Type: application/http\r\n` +
        `Content-Transfer-Encoding: binary\r\n\r\nPOST SalesRegistrationSet HTTP/1.1\r\nContent-Type: application/json\r\n\r\n` +
        `${JSON.stringify(body)}\r\n--cs${index}--\r\n`,
    )
    .join('')}--b--\r\n`;

const postBatch = async (body: string, withToken = true) => {
  const fetched = await fetch(`${sap.url}${root}`, {
    headers: { Authorization: auth, 'X-CSRF-Token': 'Fetch' },
  });
  const cookie = fetched.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const response = await fetch(`${sap.url}${root}$batch`, {
    method: 'POST',
    headers: {
      Authorization: auth,
      'Content-Type': 'multipart/mixed; boundary=b',
      ...(withToken ? { 'X-CSRF-Token': fetched.headers.get('x-csrf-token') ?? '', Cookie: cookie } : {}),
    },
    body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

describe('SAP sandbox $batch', () => {
  it('answers 202 with a change set response per success and a lone HTTP part per failure, in order', async () => {
    // Act
    const answer = await postBatch(batchBody([entity(1), entity(2, { CommPriv: 'X' }), entity(3)]));

    // Assess
    expect(answer.status).toBe(202);
    const boundary = /boundary=(\S+)/.exec(answer.headers.get('content-type') ?? '')?.[1];
    const parts = answer.text.split(`--${boundary}`).slice(1, -1);
    expect(parts).toHaveLength(3);
    expect(parts[0]).toMatch(/^\r\nContent-Type: multipart\/mixed; boundary=changesetresponse_[\w-]+\r\n/);
    expect(parts[0]).toContain('HTTP/1.1 201 Created');
    expect(parts[1]).toMatch(/^\r\nContent-Type: application\/http\r\n/);
    expect(parts[1]).toContain('HTTP/1.1 400 Bad Request');
    expect(parts[1]).toContain("Property 'CommPriv' must be C or P");
    expect(sap.registrations.map((stored) => stored.RegistrationId)).toEqual(['reg-1', 'reg-3']);
  });

  it('answers a stored RegistrationId with 409 naming it, storing nothing twice', async () => {
    // Prepare
    await postBatch(batchBody([entity(1)]));

    // Act
    const answer = await postBatch(batchBody([entity(1), entity(2)]));

    // Assess
    expect(answer.text).toContain('HTTP/1.1 409 Conflict');
    expect(answer.text).toContain('RegistrationId reg-1 already registered as document 49000001');
    expect(sap.registrations).toHaveLength(2);
  });

  it('refuses the change sets a recordErrors fault names, unprocessed, and stores the others', async () => {
    // Prepare
    sap.inject({ on: 'batch', recordErrors: { 1: { status: 400, message: 'Dealer not authorised' } } });

    // Act
    const answer = await postBatch(batchBody([entity(1), entity(2), entity(3)]));

    // Assess
    expect(answer.status).toBe(202);
    expect(answer.text.match(/HTTP\/1\.1 201 Created/g)).toHaveLength(2);
    expect(answer.text).toContain('HTTP/1.1 400 Bad Request');
    expect(answer.text).toContain('Dealer not authorised');
    expect(sap.registrations.map((stored) => stored.RegistrationId)).toEqual(['reg-1', 'reg-3']);
  });

  it('does not apply a planted refusal to a RegistrationId it already holds: the repeat is its 409, as SAP answers', async () => {
    // Prepare: reg-1 stored by an earlier call whose answer was lost; the retry meets a planted refusal of it.
    await postBatch(batchBody([entity(1)]));
    sap.inject({
      on: 'batch',
      recordErrors: {
        0: { status: 400, message: 'Dealer not authorised' },
        1: { status: 400, message: 'Dealer not authorised' },
      },
    });

    // Act
    const answer = await postBatch(batchBody([entity(1), entity(2)]));

    // Assess: the repeat is the repeat; the new registration is refused as planted.
    expect(answer.text).toContain('HTTP/1.1 409 Conflict');
    expect(answer.text).toContain('RegistrationId reg-1 already registered as document 49000001');
    expect(answer.text.match(/Dealer not authorised/g)).toHaveLength(1);
    expect(sap.registrations.map((stored) => stored.RegistrationId)).toEqual(['reg-1']);
  });

  it('requires a valid CSRF token for the whole call', async () => {
    // Act
    const answer = await postBatch(batchBody([entity(1)]), false);

    // Assess
    expect(answer.status).toBe(403);
    expect(answer.headers.get('x-csrf-token')).toBe('Required');
    expect(sap.registrations).toHaveLength(0);
  });

  it('refuses a body that is not valid multipart as a whole, storing nothing', async () => {
    // Act
    const answer = await postBatch(batchBody([entity(1), entity(2)]).slice(0, -10));

    // Assess
    expect(answer.status).toBe(400);
    expect(sap.registrations).toHaveLength(0);
  });

  it('lists single POSTs and $batch calls with their sizes on /_sandbox/calls', async () => {
    // Prepare
    await postBatch(batchBody([entity(1), entity(2), entity(3)]));

    // Act
    const calls = await fetch(`${sap.url}/_sandbox/calls`).then((response) => response.json());

    // Assess
    expect(calls).toEqual([{ kind: 'batch', status: 202, registrations: 3 }]);
  });
});
