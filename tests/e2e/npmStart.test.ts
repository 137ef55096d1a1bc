import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';
import { buildOpenApiDocument } from '../../tools/openapi/buildOpenApiDocument.ts';
import { privateSale } from '../../tools/openapi/examples.ts';

const dirs: string[] = [];
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-e2e-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const postSales = (service: RunningService, records: unknown[]) =>
  fetch(`${service.url}/erp/sales_registration`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
    body: JSON.stringify(records),
  });

const postCaseForm = (service: RunningService, fields: Record<string, string>) =>
  fetch(`${service.url}/crm/case`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-api-key': service.keys['example-web-forms'],
    },
    body: new URLSearchParams(fields).toString(),
  });

interface Answers {
  sales: { registrations: { id: string }[] };
  kase: { CrmId: string };
  status: { status: string; attempts?: number; downstreamId?: string; error?: string; message?: string };
}
/** An operation of openapi.json, as far as its JSON examples. */
interface Documented {
  responses: Record<string, { content: Record<string, { examples: Record<string, { value: unknown }> }> }>;
}
const json = async <T>(response: Response | Promise<Response>): Promise<T> =>
  (await (await response).json()) as T;

const lookUp = async (service: RunningService, path: string, client: string) => {
  const response = await fetch(`${service.url}${path}`, { headers: { 'x-api-key': service.keys[client] } });
  return { status: response.status, body: await json<Answers['status']>(response) };
};

/** Polls a status look-up until the record leaves `accepted`. */
const settled = async (service: RunningService, path: string, client: string) => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await lookUp(service, path, client);
    if (answer.body.status !== 'accepted' || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const listeningNow = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection(Number(new URL(url).port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Whether the port still answers after a grace period for the runner's own shutdown (npm exits first). */
const listening = async (url: string) => {
  for (let i = 0; i < 50 && (await listeningNow(url)); i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return listeningNow(url);
};

describe('npm start with the built-in sandboxes', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await npmStart({ DATA_DIR: await dataDir() });
  }, 90_000);

  it('answers both operations over HTTP and delivers to the sandboxes', async () => {
    // Act
    const frame = uniqueFrame('E2E');
    const sales = await postSales(service, [salesRegistrationInput({ FrameNum: frame })]);
    const salesBody = await json<Answers['sales']>(sales);
    const kase = await postCaseForm(service, {
      firstName: 'Formfirst',
      surname: 'Formlast',
      email: 'form.e2e@example.com',
      privacyConsent: 'on',
      submit: 'Send',
    });
    const caseBody = await json<Answers['kase']>(kase);
    // Assess
    expect(sales.status).toBe(200);
    expect(salesBody).toEqual({
      success: true,
      message: '1 sales registration(s) accepted',
      registrations: [{ id: expect.stringMatching(/^[0-9a-f]{32}$/), FrameNum: frame }],
    });
    expect(kase.status).toBe(200);
    expect(caseBody).toEqual({ CrmId: expect.any(String), CrmResponseSuccess: true });
    const registration = await settled(
      service,
      `/erp/sales_registration/${salesBody.registrations[0].id}`,
      'example-dealer',
    );
    const caseStatus = await settled(service, `/crm/case/${caseBody.CrmId}`, 'example-web-forms');
    expect(registration).toMatchObject({
      status: 200,
      body: { status: 'delivered', attempts: 1, downstreamId: expect.any(String) },
    });
    expect(caseStatus).toMatchObject({
      status: 200,
      body: { status: 'delivered', attempts: 1, downstreamId: expect.stringMatching(/^500/) },
    });
  });

  it('answers refusals in the contract shapes over HTTP', async () => {
    const bad = await postSales(service, [salesRegistrationInput({ email: 'nope' })]);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ success: false, message: '[0].email is not a valid email address' });
    const unknown = await lookUp(service, '/crm/case/0123456789abcdef0123456789abcdef', 'example-web-forms');
    expect(unknown).toEqual({ status: 404, body: { message: 'no case with this CrmId' } });
    const openApi = await fetch(`${service.url}/openapi.json`);
    const document = await json<{ openapi: string; servers: { url: string }[] }>(openApi);
    expect(document.openapi).toBe('3.1.0');
    // The port it listens on (a free one here), not the committed document's 3000.
    expect(document.servers.map((server) => server.url)).toEqual([service.url]);
  });

  it('routes GET ?FrameNum= apart from the POST on the same path, and answers as openapi.json documents it', async () => {
    // The documented look-up: the documented sale, delivered, then looked up by its frame number.
    const operation = (buildOpenApiDocument().paths as unknown as Record<string, Record<string, Documented>>)[
      '/erp/sales_registration'
    ].get;
    const documented = (status: string, name: string) =>
      operation.responses[status].content['application/json'].examples[name].value;
    const [{ id }] = (await json<Answers['sales']>(postSales(service, [privateSale]))).registrations;
    await settled(service, `/erp/sales_registration/${id}`, 'example-dealer');
    const byFrame = (query: string, client = 'example-dealer') =>
      lookUp(service, `/erp/sales_registration?${query}`, client) as Promise<{
        status: number;
        body: unknown;
      }>;
    const found = await byFrame(`FrameNum=${privateSale.FrameNum}`);
    // The same status and attempts; its own id (content ids are keyed by the stage's own secret: lib/intake/recordIds.ts),
    // times and SAP document number.
    const { FrameNum, records } = documented('200', 'found') as { FrameNum: string; records: object[] };
    expect(found).toEqual({
      status: 200,
      body: {
        FrameNum,
        records: records.map((record) => ({
          ...record,
          id,
          acceptedAt: expect.any(String),
          updatedAt: expect.any(String),
          downstreamId: expect.any(String),
        })),
      },
    });
    expect(await byFrame('FrameNum=EXAMPLEFRAME00099')).toEqual({
      status: 200,
      body: documented('200', 'none'),
    });
    // Another client sees nothing of the dealer's records.
    expect(await byFrame(`FrameNum=${privateSale.FrameNum}`, 'example-web-forms')).toEqual({
      status: 200,
      body: { FrameNum: privateSale.FrameNum, records: [] },
    });
    expect(await byFrame('')).toEqual({ status: 400, body: documented('400', 'missing') });
    expect(await byFrame('FrameNum=%20')).toEqual({ status: 400, body: documented('400', 'blank') });
    expect(await byFrame('FrameNum=A1&FrameNum=A2')).toEqual({
      status: 400,
      body: documented('400', 'repeated'),
    });
    expect(await byFrame(`FrameNum=${'X'.repeat(31)}`)).toEqual({
      status: 400,
      body: documented('400', 'tooLong'),
    });
  });

  it('stops every child process on SIGTERM, leaving nothing listening', async () => {
    expect(await service.stop()).toBe(true);
    expect(await listening(service.url)).toBe(false);
  });
});

describe('npm start with ERP_BASE_URL and CRM_BASE_URL pointed at test servers', () => {
  let sap: SapSandbox;
  let salesforce: SalesforceSandbox;
  beforeAll(async () => {
    [sap, salesforce] = await Promise.all([
      startSapSandbox({ username: 'E2EUSER', password: 'e2e-pass' }),
      startSalesforceSandbox({ clientId: 'e2e-id', clientSecret: 'e2e-secret' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sap.stop(), salesforce.stop()]);
  });

  it('delivers there, and a restart queues again the records still accepted', async () => {
    // Prepare: SAP refuses service at first, so the registration stays accepted (retry in 30 s).
    const dir = await dataDir();
    const settings = {
      DATA_DIR: dir,
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'E2EUSER',
      ERP_PASSWORD: 'e2e-pass',
      CRM_BASE_URL: salesforce.url,
      CRM_CLIENT_ID: 'e2e-id',
      CRM_CLIENT_SECRET: 'e2e-secret',
    };
    sap.inject({ status: 503 });
    const first = await npmStart(settings);
    const frame = uniqueFrame('RST');
    const accepted = await json<Answers['sales']>(
      postSales(first, [salesRegistrationInput({ FrameNum: frame })]),
    );
    const id = accepted.registrations[0].id;
    const kase = await json<Answers['kase']>(
      postCaseForm(first, { firstName: 'Ext', surname: 'Servers', email: 'ext@example.com' }),
    );
    const caseStatus = await settled(first, `/crm/case/${kase.CrmId}`, 'example-web-forms');
    const waiting = await lookUp(first, `/erp/sales_registration/${id}`, 'example-dealer');
    // Act: stop (the in-memory queue is lost) and start again on the same data.
    expect(await first.stop()).toBe(true);
    expect(await listening(first.url)).toBe(false);
    const second = await npmStart(settings);
    const delivered = await settled(second, `/erp/sales_registration/${id}`, 'example-dealer');
    await second.stop();
    // Assess
    expect(caseStatus.body).toMatchObject({ status: 'delivered', downstreamId: salesforce.cases[0]?.id });
    expect(salesforce.cases.map((c) => c.externalId)).toEqual([kase.CrmId]);
    expect(waiting.body).toMatchObject({ status: 'accepted', attempts: 1, error: expect.any(String) });
    expect(delivered.body).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
  }, 120_000);

  it('redrives dead letters with npm run redrive: the failed record is accepted again and delivered', async () => {
    // Prepare: one attempt only, and SAP answers 503 to it: the record fails and its message is dead-lettered.
    const dir = await dataDir();
    sap.inject({ status: 503 });
    const service = await npmStart({
      DATA_DIR: dir,
      DELIVERY_MAX_ATTEMPTS: '1',
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'E2EUSER',
      ERP_PASSWORD: 'e2e-pass',
    });
    const accepted = await json<Answers['sales']>(
      postSales(service, [salesRegistrationInput({ FrameNum: uniqueFrame('DLQ') })]),
    );
    const id = accepted.registrations[0].id;
    const failed = await settled(service, `/erp/sales_registration/${id}`, 'example-dealer');
    // Act
    const { stdout } = await promisify(execFile)('npm', ['run', 'redrive', '--', 'erp'], {
      env: { ...process.env, DATA_DIR: dir },
    });
    const delivered = await settled(service, `/erp/sales_registration/${id}`, 'example-dealer');
    await service.stop();
    // Assess
    expect(failed.body).toMatchObject({ status: 'failed', attempts: 1 });
    expect(stdout).toMatch(/moved 1 message/);
    expect(delivered.body).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
  }, 120_000);
});
