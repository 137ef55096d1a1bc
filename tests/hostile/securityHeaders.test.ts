import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { securityHeaders } from '../../lib/http/securityHeaders.ts';
import { unexpectedErrorText } from '../../lib/http/shapes.ts';
import { expectedSecurityHeaders, expectNoStackTrace, expectSecurityHeaders } from '../../testkit/answers.ts';
import {
  apiEvent,
  formPost,
  jsonPost,
  lambdaContext,
  statusGet,
} from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let proxy: Awaited<ReturnType<typeof startFaultyProxy>>;
let table: string | undefined;

beforeAll(async () => {
  aws = await isolatedAws();
  proxy = await startFaultyProxy(aws.sqsEndpoint, 'SendMessageBatch');
  process.env.AWS_ENDPOINT_URL_SQS = proxy.endpoint;
  table = process.env.RECORDS_TABLE;
});

afterEach(() => {
  proxy.heal();
  process.env.RECORDS_TABLE = table;
});

afterAll(() => proxy.stop());

/** Makes every operation fail unexpectedly (500): the status table setting is gone. */
const breakTheStore = () => {
  process.env.RECORDS_TABLE = '';
};

const sales = (body: unknown, headers: Record<string, string> = {}) =>
  salesHandler(jsonPost(SALES, body, headers), lambdaContext());
const saleBody = () => [salesRegistrationInput({ FrameNum: uniqueFrame() })];
const caseBody = () => caseInput({ frameNo: uniqueFrame() });

const expectAnswer = (response: APIGatewayProxyResult, status: number) => {
  expect(response.statusCode).toBe(status);
  expectSecurityHeaders(response);
  expectNoStackTrace(response);
};

describe('security headers on every answer of POST /erp/sales_registration', () => {
  it('200', async () => expectAnswer(await sales(saleBody()), 200));

  it('400, 403, 413, 415', async () => {
    expectAnswer(await sales([{ DealerId: 1 }]), 400);
    expectAnswer(await sales('[', {}), 400);
    expectAnswer(await sales(saleBody(), { 'x-api-key': 'not a key' }), 403);
    expectAnswer(await sales(`[${' '.repeat(1024 * 1024)}]`), 413);
    expectAnswer(await sales(saleBody(), { 'Content-Type': 'text/plain' }), 415);
  });

  it('500, with the plain-text answer and no stack trace', async () => {
    breakTheStore();
    const event = jsonPost(SALES, saleBody());
    const response = await salesHandler(event, lambdaContext());
    expectAnswer(response, 500);
    expect(response.body).toBe(unexpectedErrorText(event.requestContext.requestId));
  });

  it('503 with Retry-After', async () => {
    proxy.failAfter(0);
    const response = await sales(saleBody());
    expectAnswer(response, 503);
    expect(response.headers?.['retry-after']).toBe('5');
  });
});

describe('security headers on every answer of POST /crm/case', () => {
  it('200 for JSON and for a form', async () => {
    expectAnswer(await caseHandler(jsonPost(CASE, caseBody()), lambdaContext()), 200);
    const form = { ...caseBody(), privacyConsent: 'on' } as Record<string, string>;
    expectAnswer(await caseHandler(formPost(CASE, form), lambdaContext()), 200);
  });

  it('400, 403, 413, 415', async () => {
    expectAnswer(await caseHandler(jsonPost(CASE, { email: 'x' }), lambdaContext()), 400);
    expectAnswer(
      await caseHandler(jsonPost(CASE, caseBody(), { 'x-api-key': 'not a key' }), lambdaContext()),
      403,
    );
    expectAnswer(
      await caseHandler(jsonPost(CASE, caseInput({ comments: 'c'.repeat(70_000) })), lambdaContext()),
      413,
    );
    expectAnswer(
      await caseHandler(jsonPost(CASE, caseBody(), { 'Content-Type': 'text/xml' }), lambdaContext()),
      415,
    );
  });

  it('500, with stackTrace empty', async () => {
    breakTheStore();
    const response = await caseHandler(jsonPost(CASE, caseBody()), lambdaContext());
    expectAnswer(response, 500);
    expect(JSON.parse(response.body)).toEqual({
      error: 'An unexpected error occurred',
      details: expect.stringContaining('Reference: '),
      stackTrace: '',
    });
  });

  it('503 with Retry-After', async () => {
    proxy.failAfter(0);
    const response = await caseHandler(jsonPost(CASE, caseBody()), lambdaContext());
    expectAnswer(response, 503);
    expect(response.headers?.['retry-after']).toBe('5');
  });
});

describe('security headers on every answer of the status look-ups', () => {
  it('200, 403, 404', async () => {
    const accepted = await caseHandler(jsonPost(CASE, caseBody()), lambdaContext());
    const { CrmId } = JSON.parse(accepted.body);
    expectAnswer(await recordStatus(statusGet(`${CASE}/${CrmId}`, { CrmId }), lambdaContext()), 200);
    expectAnswer(
      await recordStatus(
        statusGet(`${CASE}/${CrmId}`, { CrmId }, { 'x-api-key': 'not a key' }),
        lambdaContext(),
      ),
      403,
    );
    expectAnswer(await recordStatus(statusGet(`${SALES}/0`, { id: '0' }), lambdaContext()), 404);
  });

  it('500', async () => {
    breakTheStore();
    const id = '0123456789abcdef0123456789abcdef';
    const response = await recordStatus(statusGet(`${SALES}/${id}`, { id }), lambdaContext());
    expectAnswer(response, 500);
    expect(JSON.parse(response.body)).toEqual({ message: expect.stringMatching(/^An unexpected error/) });
  });
});

describe('the securityHeaders middleware', () => {
  const run = async (
    middleware: ReturnType<typeof securityHeaders>,
    response: APIGatewayProxyResult,
    hook: 'after' | 'onError',
  ) => {
    const request = { event: apiEvent(), context: lambdaContext(), response, error: null, internal: {} };
    await middleware[hook]?.(request as never);
    return request.response;
  };

  it.each(['after', 'onError'] as const)(
    '%s: replaces headers of the same name in any case',
    async (hook) => {
      const response = await run(
        securityHeaders(),
        { statusCode: 200, headers: { 'Cache-Control': 'public', 'content-type': 'text/plain' }, body: '' },
        hook,
      );
      expect(response.headers).toEqual({ 'content-type': 'text/plain', ...expectedSecurityHeaders });
    },
  );

  it('takes options over its defaults: another value, or false to leave a header out', async () => {
    const response = await run(
      securityHeaders({ headers: { 'cache-control': 'private, max-age=60', 'x-frame-options': false } }),
      { statusCode: 200, body: '' },
      'after',
    );
    expect(response.headers?.['cache-control']).toBe('private, max-age=60');
    expect(response.headers).not.toHaveProperty('x-frame-options');
    expect(response.headers?.['x-content-type-options']).toBe('nosniff');
  });

  it('leaves a missing answer alone (nothing to add headers to)', async () => {
    expect(await run(securityHeaders(), undefined as never, 'onError')).toBeUndefined();
  });
});
