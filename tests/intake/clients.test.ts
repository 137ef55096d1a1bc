import middy from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { checkClientsConfig, clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { callerIdentity, callerOf } from '../../lib/http/callerIdentity.ts';
import { contractErrors } from '../../lib/http/contractErrors.ts';
import { caseShape } from '../../lib/http/shapes.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { jsonPost, lambdaContext, statusGet } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
beforeAll(async () => {
  aws = await isolatedAws();
});

const SALES = '/erp/sales_registration';

describe('client keys', () => {
  it.each([
    ['no key', {}],
    ['an unknown key', { 'x-api-key': 'not-a-key' }],
  ])("refuses %s with 403 in each operation's shape", async (_label, headers) => {
    // Prepare
    const without = (event: APIGatewayProxyEvent) => {
      event.headers = {
        ...Object.fromEntries(Object.entries(event.headers).filter(([k]) => k !== 'x-api-key')),
        ...headers,
      };
      return event;
    };
    // Act
    const sales = await salesHandler(without(jsonPost(SALES, [salesRegistrationInput()])), lambdaContext());
    const kase = await caseHandler(without(jsonPost('/crm/case', caseInput())), lambdaContext());
    const status = await recordStatus(without(statusGet('/crm/case/x', { CrmId: 'x' })), lambdaContext());
    // Assess
    expect([sales.statusCode, kase.statusCode, status.statusCode]).toEqual([403, 403, 403]);
    expect(JSON.parse(sales.body)).toEqual({ success: false, message: expect.stringMatching(/x-api-key/) });
    expect(JSON.parse(kase.body)).toMatch(/^Create Case failed: .*x-api-key/);
    expect(JSON.parse(status.body)).toEqual({ message: expect.stringMatching(/x-api-key/) });
    expect(await aws.drain(aws.resources.queues.SalesRegistrationQueue.url)).toEqual([]);
  });
});

describe('dealer binding', () => {
  it('refuses a sale for a dealer the client is not bound to with 403 naming the record, queueing nothing', async () => {
    const records = [
      salesRegistrationInput({ FrameNum: uniqueFrame() }),
      salesRegistrationInput({ FrameNum: uniqueFrame(), DealerId: 5555 }),
    ];
    const response = await salesHandler(jsonPost(SALES, records), lambdaContext());
    expect(response.statusCode).toBe(403);
    expect(JSON.parse(response.body)).toEqual({
      success: false,
      message: '[1].DealerId is not a dealer this client may register sales for',
    });
    expect(response.body).not.toContain('5555');
    expect(await aws.drain(aws.resources.queues.SalesRegistrationQueue.url)).toEqual([]);
  });

  it('accepts a sale under the business-partner number the client is bound to', async () => {
    const response = await salesHandler(
      jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame(), DealerId: 100234 })]),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
  });

  it('refuses sales from a client bound to no dealer', async () => {
    const event = jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
      'x-api-key': testKeys.webForms,
    });
    expect((await salesHandler(event, lambdaContext())).statusCode).toBe(403);
  });

  it('answers 404 to a status look-up of a record another client submitted', async () => {
    // Prepare
    const accepted = await caseHandler(
      jsonPost('/crm/case', caseInput({ frameNo: uniqueFrame() })),
      lambdaContext(),
    );
    const { CrmId } = JSON.parse(accepted.body);
    // Act
    const own = await recordStatus(statusGet(`/crm/case/${CrmId}`, { CrmId }), lambdaContext());
    const other = await recordStatus(
      statusGet(`/crm/case/${CrmId}`, { CrmId }, { 'x-api-key': testKeys.dealer }),
      lambdaContext(),
    );
    // Assess
    expect(own.statusCode).toBe(200);
    expect(other.statusCode).toBe(404);
    expect(JSON.parse(other.body)).toEqual({ message: 'no case with this CrmId' });
  });

  it("keeps each client's records apart: the same content from two clients is two records", async () => {
    const body = caseInput({ frameNo: uniqueFrame() });
    const a = JSON.parse((await caseHandler(jsonPost('/crm/case', body), lambdaContext())).body).CrmId;
    const b = JSON.parse(
      (await caseHandler(jsonPost('/crm/case', body, { 'x-api-key': testKeys.dealer }), lambdaContext()))
        .body,
    ).CrmId;
    expect(a).not.toBe(b);
  });
});

describe('browser forms (key-less posts from allowed origins)', () => {
  const enabled: ClientsConfig = {
    ...clientsConfig,
    browserForms: { enabled: true, allowedOrigins: ['https://forms.example.com'] },
  };
  const probe = (config: ClientsConfig) =>
    middy<APIGatewayProxyEvent, { statusCode: number; body: string }>()
      .use(contractErrors({ shape: caseShape }))
      .use(callerIdentity({ allowBrowserForms: true, config }))
      .handler(async (_event, context: Context) => ({
        statusCode: 200,
        body: JSON.stringify(callerOf(context)),
      }));
  const keyless = (origin: string) => {
    const event = jsonPost('/crm/case', caseInput(), { origin });
    delete event.headers['x-api-key'];
    return event;
  };

  it('are off by default', async () => {
    expect(clientsConfig.browserForms.enabled).toBe(false);
    expect((await caseHandler(keyless('https://www.example.com'), lambdaContext())).statusCode).toBe(403);
  });

  it('let in an allowed origin without a key when enabled, and nobody else', async () => {
    const allowed = await probe(enabled)(keyless('https://forms.example.com'), lambdaContext());
    const other = await probe(enabled)(keyless('https://evil.example.net'), lambdaContext());
    expect(allowed.statusCode).toBe(200);
    expect(JSON.parse(allowed.body)).toEqual({ kind: 'browserForm', origin: 'https://forms.example.com' });
    expect(other.statusCode).toBe(403);
  });
});

describe('clients configuration', () => {
  const base = (): ClientsConfig => structuredClone(clientsConfig);
  it.each([
    ['a dealer number of 5 digits', (c: ClientsConfig) => c.clients[0].dealers.push(12345), /dealer 12345/],
    ['a client declared twice', (c: ClientsConfig) => c.clients.push({ ...c.clients[0] }), /declared twice/],
    [
      'an origin with a path',
      (c: ClientsConfig) => c.browserForms.allowedOrigins.push('https://x.example/form'),
      /origin/,
    ],
  ])('refuses %s', (_label, spoil, message) => {
    const config = base();
    spoil(config);
    expect(() => checkClientsConfig(config)).toThrow(message);
  });
});
