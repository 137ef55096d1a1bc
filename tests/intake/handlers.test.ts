import { beforeAll, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import {
  apiEvent,
  formPost,
  jsonPost,
  lambdaContext,
  statusGet,
} from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';

beforeAll(async () => {
  await isolatedAws();
});

describe('POST /erp/sales_registration', () => {
  it('accepts valid records: 200 with ids and trimmed FrameNums in request order', async () => {
    // Prepare
    const frames = [uniqueFrame(), uniqueFrame()];
    const event = jsonPost(SALES, [
      salesRegistrationInput({ FrameNum: ` ${frames[0]} ` }),
      salesRegistrationInput({ FrameNum: frames[1] }),
    ]);
    // Act
    const response = await salesHandler(event, lambdaContext());
    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('application/json');
    const body = JSON.parse(response.body);
    expect(body.success).toBe(true);
    expect(body.message).toMatch(/\b2\b/);
    expect(body.registrations.map((r: { FrameNum: string }) => r.FrameNum)).toEqual(frames);
    expect(body.registrations[0].id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('refuses invalid records with 400 naming index, field and rule', async () => {
    const event = jsonPost(SALES, [salesRegistrationInput(), salesRegistrationInput({ email: 'x' })]);
    const response = await salesHandler(event, lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      success: false,
      message: '[1].email is not a valid email address',
    });
  });

  it.each([
    ['text/plain', 415, 'Content-Type must be application/json'],
    ['application/x-www-form-urlencoded', 415, 'Content-Type must be application/json'],
    // middy's JSON parser alone would take it (any `+json` type): the API takes application/json only.
    ['application/vnd.api+json', 415, 'Content-Type must be application/json'],
  ])('refuses Content-Type %s with %i', async (contentType, status, message) => {
    const response = await salesHandler(
      jsonPost(SALES, [salesRegistrationInput()], { 'Content-Type': contentType }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(status);
    expect(JSON.parse(response.body)).toEqual({ success: false, message });
  });

  it('takes a charset parameter and any header case', async () => {
    const event = jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
      'Content-Type': 'Application/JSON; charset=utf-8',
    });
    expect((await salesHandler(event, lambdaContext())).statusCode).toBe(200);
  });

  it('refuses a body without Content-Type with 415', async () => {
    const response = await salesHandler(
      apiEvent({ body: '[]', path: SALES, headers: { 'x-api-key': testKeys.dealer } }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(415);
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const response = await salesHandler(jsonPost(SALES, `[${' '.repeat(1024 * 1024)}]`), lambdaContext());
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ success: false, message: 'body must be at most 1 MiB' });
  });

  it.each([
    ['malformed JSON', '[{"DealerId": 1234,', 'body is not valid JSON'],
    [
      'an object instead of an array',
      '{"DealerId": 1234}',
      'body must be a JSON array of sales registration records',
    ],
    ['an empty array', '[]', 'body must hold at least one sales registration record'],
    ['an empty body', '', 'body is not valid JSON'],
  ])('refuses %s with 400', async (_label, body, message) => {
    const response = await salesHandler(jsonPost(SALES, body), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ success: false, message });
  });

  it('refuses __proto__ keys without touching prototypes', async () => {
    const response = await salesHandler(
      jsonPost(SALES, '[{"__proto__": {"polluted": true}}]'),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('POST /crm/case', () => {
  it('accepts JSON: 200 with CrmId', async () => {
    const response = await caseHandler(
      jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
    const body = JSON.parse(response.body);
    expect(body).toEqual({ CrmId: expect.stringMatching(/^[0-9a-f]{32}$/), CrmResponseSuccess: true });
  });

  it('accepts an HTML form with its booleans and extra fields', async () => {
    const fields = {
      firstName: 'Form',
      surname: 'Person',
      email: 'form.person@example.com',
      privacyConsent: 'on',
      submit: 'Send',
      frameNo: uniqueFrame(),
    };
    const response = await caseHandler(formPost(CASE, fields), lambdaContext());
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).CrmResponseSuccess).toBe(true);
  });

  it("refuses an invalid email with the old service's JSON string", async () => {
    const response = await caseHandler(jsonPost(CASE, caseInput({ email: 'not valid' })), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toBe('Create Case failed: email is not valid');
  });

  it('joins several reasons with "; "', async () => {
    const response = await caseHandler(
      formPost(CASE, { firstName: '', surname: 'S', email: 'bad' }),
      lambdaContext(),
    );
    expect(JSON.parse(response.body)).toBe('Create Case failed: firstName is required; email is not valid');
  });

  it('refuses a JSON array with 400', async () => {
    const response = await caseHandler(jsonPost(CASE, [caseInput()]), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toBe('Create Case failed: body must be a single case object');
  });

  it('refuses malformed JSON with 400', async () => {
    const response = await caseHandler(jsonPost(CASE, '{"firstName": '), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toBe('Create Case failed: body is not valid JSON');
  });

  it('refuses another content type with 415 in the same shape', async () => {
    const response = await caseHandler(jsonPost(CASE, 'x', { 'Content-Type': 'text/xml' }), lambdaContext());
    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toBe(
      'Create Case failed: Content-Type must be application/json or application/x-www-form-urlencoded',
    );
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const response = await caseHandler(
      jsonPost(CASE, caseInput({ comments: 'c'.repeat(70 * 1024) })),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body)).toBe('Create Case failed: body must be at most 64 KiB');
  });
});

describe('status look-ups', () => {
  it('show an accepted record, and 404 for an unknown id or the other kind', async () => {
    // Prepare
    const accepted = await caseHandler(
      jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })),
      lambdaContext(),
    );
    const { CrmId } = JSON.parse(accepted.body);
    // Act
    const found = await recordStatus(statusGet(`${CASE}/${CrmId}`, { CrmId }), lambdaContext());
    const wrongKind = await recordStatus(statusGet(`${SALES}/${CrmId}`, { id: CrmId }), lambdaContext());
    const unknown = await recordStatus(statusGet(`${CASE}/0123`, { CrmId: '0123' }), lambdaContext());
    // Assess
    expect(found.statusCode).toBe(200);
    const view = JSON.parse(found.body);
    expect(view).toEqual({
      id: CrmId,
      status: 'accepted',
      attempts: 0,
      acceptedAt: expect.any(String),
      updatedAt: expect.any(String),
      // The record's trace (contract section 8): its request's, a new one here.
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(new Date(view.acceptedAt).toISOString()).toBe(view.acceptedAt);
    expect(wrongKind.statusCode).toBe(404);
    expect(JSON.parse(wrongKind.body)).toEqual({ message: 'no sales registration with this id' });
    expect(unknown.statusCode).toBe(404);
  });
});
