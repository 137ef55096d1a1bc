import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createErpClient, DEFAULT_ERP_BATCH_SIZE } from '../../lib/downstream/erp/index.ts';
import type { BatchItem } from '../../lib/downstream/types.ts';
import type { SalesRegistration } from '../../lib/types.ts';
import { readBody } from '../../testkit/readBody.ts';
import {
  type ErpFixture,
  PERSONAL_VALUES,
  registration,
  requestLines,
  SERVICE_ROOT,
  startErp,
} from './fixtures.ts';

const BATCH = `${SERVICE_ROOT}$batch`;

let fixture: ErpFixture | undefined;
let scripted: Server | undefined;
afterEach(async () => {
  await fixture?.sap.stop();
  fixture = undefined;
  scripted?.closeAllConnections();
  await new Promise((resolve) => scripted?.close(resolve) ?? resolve(undefined));
  scripted = undefined;
});

/** `count` distinct valid registrations, ids `reg-1` … */
const registrations = (count: number, from = 1): BatchItem<SalesRegistration>[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `reg-${from + index}`,
    record: registration({ FrameNum: `JH2RC5000MK${String(from + index).padStart(6, '0')}` }),
  }));

const kinds = (outcomes: Map<string, { kind: string }>): Record<string, string> =>
  Object.fromEntries([...outcomes].map(([id, outcome]) => [id, outcome.kind]));

describe('ERP $batch: per change set outcomes', () => {
  it('decides each registration by its own change set: delivered, refused, own repeat', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registrations(1, 9)[0].record, 'reg-9');
    const items = [
      ...registrations(2),
      {
        id: 'reg-bad',
        record: registration({ FrameNum: 'JH2RC5000MK777777', email: 'giulietta.marchetti' }),
      },
      registrations(1, 9)[0],
      ...registrations(1, 3),
    ];

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(items);

    // Assess
    expect(kinds(outcomes)).toEqual({
      'reg-1': 'delivered',
      'reg-2': 'delivered',
      'reg-bad': 'permanent',
      'reg-9': 'delivered',
      'reg-3': 'delivered',
    });
    // Each keeps its own change set's status: 201 created, 409 for the own repeat that stands delivered.
    expect(outcomes.get('reg-1')).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '49000002',
      reachedDownstream: true,
    });
    expect(outcomes.get('reg-9')).toMatchObject({ kind: 'delivered', status: 409 });
    expect(outcomes.get('reg-3')).toEqual({
      kind: 'delivered',
      status: 201,
      downstreamId: '49000004',
      reachedDownstream: true,
    });
    const refused = outcomes.get('reg-bad');
    expect(refused).toEqual({
      kind: 'permanent',
      error: 'E-mail address [redacted] is not valid',
      reachedDownstream: true,
    });
    for (const value of PERSONAL_VALUES) expect(JSON.stringify([...outcomes])).not.toContain(value);
    expect(sap.registrations.map((stored) => stored.RegistrationId)).toEqual([
      'reg-9',
      'reg-1',
      'reg-2',
      'reg-3',
    ]);
    expect(requestLines(sap).slice(2)).toEqual([`POST ${BATCH} 202`]);
    const calls = await fetch(`${sap.url}/_sandbox/calls`).then((response) => response.json());
    expect(calls).toEqual([
      { kind: 'post', status: 201, registrations: 1 },
      { kind: 'batch', status: 202, registrations: 5 },
    ]);
  });

  it('sends one change set per registration with the single POST body, token, cookies and Basic auth', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;

    // Act
    await erp.deliverSalesRegistrations(registrations(2));

    // Assess
    const call = sap.requests.at(-1);
    expect(call?.headers['content-type']).toMatch(/^multipart\/mixed; boundary=batch_[\w-]+$/);
    expect(call?.headers.authorization).toBe(
      `Basic ${Buffer.from(`${sap.username}:${sap.password}`).toString('base64')}`,
    );
    expect(call?.headers['x-csrf-token']).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
    expect(call?.headers.cookie).toMatch(/SAP_SESSIONID_SBX_100=/);
    expect(call?.body.match(/^POST SalesRegistrationSet HTTP\/1\.1\r$/gm)).toHaveLength(2);
    expect(sap.registrations[0].entity).toEqual({ ...registrations(1)[0].record, RegistrationId: 'reg-1' });
  });

  it('sends a registration listed twice once, and a lone one by the single POST', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    const [one] = registrations(1);

    // Act
    const twice = await erp.deliverSalesRegistrations([one, one]);

    // Assess
    expect(kinds(twice.outcomes)).toEqual({ 'reg-1': 'delivered' });
    expect(requestLines(sap)).toEqual([
      `GET ${SERVICE_ROOT} 200`,
      `POST ${SERVICE_ROOT}SalesRegistrationSet 201`,
    ]);
    expect(sap.registrations).toHaveLength(1);
  });

  it(`sends the largest call, ERP_BATCH_SIZE (default ${DEFAULT_ERP_BATCH_SIZE}), as one $batch`, async () => {
    // Prepare (the worker slices a batch into calls of callSize: tests/delivery/batching.test.ts)
    fixture = await startErp();
    const { sap, config } = fixture;
    const erp = createErpClient({ ...config, timeoutMs: 10_000 });
    const items = registrations(DEFAULT_ERP_BATCH_SIZE);

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(items);

    // Assess
    expect(new Set(Object.values(kinds(outcomes)))).toEqual(new Set(['delivered']));
    expect(outcomes.size).toBe(items.length);
    const calls = (await fetch(`${sap.url}/_sandbox/calls`).then((response) => response.json())) as {
      registrations: number;
    }[];
    expect(calls.map((call: { registrations: number }) => call.registrations)).toEqual([50]);
    expect(sap.registrations).toHaveLength(items.length);
  });
});

describe('ERP $batch: failures of the whole call', () => {
  for (const status of [401, 503, 400]) {
    it(`makes every registration transient on a whole-call ${status}, storing nothing`, async () => {
      // Prepare
      fixture = await startErp();
      const { sap, erp } = fixture;
      sap.inject({ on: 'batch', status });

      // Act
      const { outcomes } = await erp.deliverSalesRegistrations(registrations(3));

      // Assess
      for (const outcome of outcomes.values()) {
        expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
        expect(outcome.kind === 'transient' && outcome.error).toMatch(
          new RegExp(`^HTTP ${status} to the whole \\$batch`),
        );
      }
      expect(outcomes.size).toBe(3);
      expect(sap.registrations).toHaveLength(0);
    });
  }

  it('makes one call: a whole-call failure says so, and more than one call carries is refused before any call', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ on: 'batch', status: 503 });
    const items = registrations(DEFAULT_ERP_BATCH_SIZE);

    // Act
    const { outcomes, failedWhole } = await erp.deliverSalesRegistrations(items);
    const tooMany = erp.deliverSalesRegistrations(registrations(DEFAULT_ERP_BATCH_SIZE + 1));

    // Assess: one $batch reached SAP; every record's outcome is the call's failure, marked as such.
    await expect(tooMany).rejects.toThrow(RangeError);
    const calls = (await fetch(`${sap.url}/_sandbox/calls`).then((response) => response.json())) as {
      registrations: number;
    }[];
    expect(calls.map((call) => call.registrations)).toEqual([DEFAULT_ERP_BATCH_SIZE]);
    expect(erp.callSize).toBe(DEFAULT_ERP_BATCH_SIZE);
    expect(failedWhole).toMatchObject({ kind: 'transient', reachedDownstream: true, wholeCall: true });
    expect([...outcomes.values()].every((outcome) => outcome === failedWhole)).toBe(true);
    expect(outcomes.size).toBe(items.length);
    expect(sap.registrations).toHaveLength(0);
  });

  it('repeats safely after a lost answer: the repeat meets 409 naming our RegistrationIds, nothing twice', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ on: 'batch', dropAnswer: true });
    const items = registrations(3);

    // Act
    const lost = await erp.deliverSalesRegistrations(items);
    const repeated = await erp.deliverSalesRegistrations(items);

    // Assess
    for (const outcome of lost.outcomes.values()) expect(outcome.kind).toBe('transient');
    expect(sap.registrations).toHaveLength(3);
    expect(kinds(repeated.outcomes)).toEqual({
      'reg-1': 'delivered',
      'reg-2': 'delivered',
      'reg-3': 'delivered',
    });
    expect(requestLines(sap).slice(1)).toEqual([`POST ${BATCH} 0`, `POST ${BATCH} 202`]);
    expect(sap.registrations).toHaveLength(3);
  });

  it('fetches a new CSRF token once when the batch is refused with X-CSRF-Token: Required, and repeats it', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await erp.deliverSalesRegistration(registration({ FrameNum: 'JH2RC5000MK999999' }), 'reg-0');
    sap.expireCsrfTokens();

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(2));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'reg-1': 'delivered', 'reg-2': 'delivered' });
    expect(requestLines(sap).slice(2)).toEqual([
      `POST ${BATCH} 403`,
      `GET ${SERVICE_ROOT} 200`,
      `POST ${BATCH} 202`,
    ]);
    expect(sap.registrations).toHaveLength(3);
  });

  it('stops after one refresh when the new token is refused too: transient for every registration', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    sap.inject({ on: 'batch', csrfExpired: true }, { on: 'batch', csrfExpired: true });

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(2));

    // Assess
    for (const outcome of outcomes.values()) {
      expect(outcome).toEqual({
        kind: 'transient',
        error: 'HTTP 403: CSRF token refused again right after a new one was fetched',
        reachedDownstream: true,
        wholeCall: true,
      });
    }
    expect(sap.registrations).toHaveLength(0);
  });

  it('is transient, not attempted, when the ERP cannot be reached', async () => {
    // Prepare
    fixture = await startErp();
    const { sap, erp } = fixture;
    await sap.stop();

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(2));

    // Assess
    for (const outcome of outcomes.values())
      expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: false });
  });
});

/** A stand-in ERP whose `$batch` answers are scripted byte for byte (CSRF fetches get a token). */
async function scriptedErp(
  answer: (body: string, res: import('node:http').ServerResponse) => void,
): Promise<ReturnType<typeof createErpClient>> {
  scripted = createServer(async (req, res) => {
    const body = (await readBody(req)).toString('utf8');
    if (req.method === 'GET') {
      res.writeHead(200, { 'x-csrf-token': 'token-1', 'content-type': 'application/json' }).end('{}');
      return;
    }
    answer(body, res);
  });
  await new Promise<void>((resolve) => scripted?.listen(0, '127.0.0.1', resolve));
  const { port } = scripted.address() as AddressInfo;
  return createErpClient({
    baseUrl: `http://127.0.0.1:${port}`,
    servicePath: '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet',
    username: 'u',
    password: 'p',
    timeoutMs: 2000,
  });
}

const created = (id: string, document: string) =>
  `HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ d: { DocumentNumber: document, RegistrationId: id } })}`;
const changeSetPart = (http: string) =>
  `Content-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\nContent-Type: application/http\r\n\r\n${http}\r\n--cs--`;
const httpPart = (http: string) => `Content-Type: application/http\r\n\r\n${http}`;
const multipart = (parts: string[]) => `${parts.map((part) => `--b\r\n${part}\r\n`).join('')}--b--\r\n`;
const answer202 = (body: string) => (_: string, res: import('node:http').ServerResponse) =>
  res.writeHead(202, { 'content-type': 'multipart/mixed; boundary=b' }).end(body);

describe('ERP $batch: malformed answers never deliver by guess', () => {
  it('reads a well-formed scripted answer part by part (the control for the cases below)', async () => {
    // Prepare
    const erp = await scriptedErp(
      answer202(
        multipart([
          changeSetPart(created('reg-1', '1')),
          httpPart('HTTP/1.1 400 Bad Request\r\n\r\n{"error":{"message":{"value":"no"}}}'),
          changeSetPart(created('reg-3', '3')),
        ]),
      ),
    );

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'reg-1': 'delivered', 'reg-2': 'permanent', 'reg-3': 'delivered' });
  });

  it('makes every registration transient when a part is missing', async () => {
    // Prepare
    const erp = await scriptedErp(
      answer202(multipart([changeSetPart(created('reg-1', '1')), changeSetPart(created('reg-3', '3'))])),
    );

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'reg-1': 'transient', 'reg-2': 'transient', 'reg-3': 'transient' });
    expect(outcomes.get('reg-1')).toMatchObject({
      error: 'HTTP 202 to the $batch, but the answer has 2 parts for 3 change sets',
    });
  });

  it('makes every registration transient when the answer is cut off or not multipart', async () => {
    for (const body of [
      multipart([changeSetPart(created('reg-1', '1')), changeSetPart(created('reg-2', '2'))]).slice(0, -12),
      '{"d":{}}',
    ]) {
      // Prepare
      await new Promise((resolve) => scripted?.close(resolve) ?? resolve(undefined));
      const erp = await scriptedErp(answer202(body));

      // Act
      const { outcomes } = await erp.deliverSalesRegistrations(registrations(2));

      // Assess
      expect(kinds(outcomes)).toEqual({ 'reg-1': 'transient', 'reg-2': 'transient' });
    }
  });

  it('makes only the unreadable part transient, and a success naming another RegistrationId too', async () => {
    // Prepare
    const erp = await scriptedErp(
      answer202(
        multipart([
          changeSetPart(created('reg-1', '1')),
          httpPart('garbage'),
          changeSetPart(created('reg-9', '9')),
        ]),
      ),
    );

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(3));

    // Assess
    expect(kinds(outcomes)).toEqual({ 'reg-1': 'delivered', 'reg-2': 'transient', 'reg-3': 'transient' });
  });

  it('makes every registration transient, as attempted, when the connection drops in the middle of the answer', async () => {
    // Prepare
    const erp = await scriptedErp((_, res) => {
      res.writeHead(202, { 'content-type': 'multipart/mixed; boundary=b', 'content-length': '5000' });
      res.write(`--b\r\n${changeSetPart(created('reg-1', '1'))}\r\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });

    // Act
    const { outcomes } = await erp.deliverSalesRegistrations(registrations(2));

    // Assess
    for (const outcome of outcomes.values())
      expect(outcome).toMatchObject({ kind: 'transient', reachedDownstream: true });
  });
});
