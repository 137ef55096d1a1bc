/**
 * The console API's authorization layer, through its Lambda handler (functions/consoleApi.ts) against dynalite,
 * fauxqs, a recording event bus and the REAL local OpenID Connect provider of `npm start`: tokens come from its
 * code flow with PKCE, and its published keys (found by discovery) are the ones the handler verifies with. Tokens
 * that must be signed by those keys yet be wrong (another issuer or audience, expired, an old sign-in) are signed
 * with the key the test handed the provider; a forged one with a key of the test's own.
 *
 * Every route: 401 with `WWW-Authenticate: Bearer` without a token, with a malformed, forged, wrong-issuer,
 * wrong-audience or expired one (every route of the table is tried); 200 with a valid one; the operators' action 403 for support, nothing changed; every
 * answer `Cache-Control: no-store` and a CSP without `unsafe-inline` and with `frame-ancestors 'none'`.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { importJWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/consoleApi.ts';
import { CONSOLE_ROUTES } from '../../lib/console/routes.ts';
import {
  failSpan,
  inSpan,
  type Span,
  startSpan,
  traceIdOf,
  traceparentOfSpan,
  watchSpans,
} from '../../lib/observability/tracing.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type LocalOidcProvider, startLocalOidcProvider } from '../../local/oidcProvider.ts';
import { startTraceReceiver } from '../../local/traceReceiver.ts';
import { consoleApiEvent, devUserToken } from '../../testkit/consoleSignIn.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const apiUrl = 'http://localhost:39002';
/** The key the provider signs with: the test signs its wrong-but-well-signed tokens with it. */
const providerKey = {
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
};
/** A key of the test's own, under the provider key's kid: a forger's. */
const forgerKey = {
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: providerKey.kid,
};

let oidc: LocalOidcProvider;
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
const tokens: { support: string; operator: string } = { support: '', operator: '' };
let seeded: { failed: StatusRecord; other: StatusRecord };

beforeAll(async () => {
  [aws, bus, oidc] = await Promise.all([
    isolatedAws(),
    startEventBridgeRecorder(),
    startLocalOidcProvider({ apiUrl, signingKey: providerKey }),
  ]);
  Object.assign(process.env, {
    ...oidc.env,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-console',
    // No CloudWatch here: the "Activity" page counts from the store, as under npm start.
    CONSOLE_ACTIVITY_SOURCE: 'store',
  });
  tokens.support = await devUserToken(oidc, apiUrl, 'support@example.com');
  tokens.operator = await devUserToken(oidc, apiUrl, 'operator@example.com');
  seeded = {
    failed: acceptedCase({
      status: 'failed',
      statusKey: 'caseRecord#failed',
      openKind: undefined,
      dueAt: undefined,
      attempts: 3,
    }),
    other: acceptedCase({
      status: 'failed',
      statusKey: 'caseRecord#failed',
      openKind: undefined,
      dueAt: undefined,
      attempts: 3,
    }),
  };
  await seedStatusRecords([seeded.failed, seeded.other]);
});
afterAll(async () => {
  await Promise.all([oidc?.stop(), bus?.stop()]);
});

/** An ID token as the provider signs them, for the support user, with `claims` changed. */
const signed = async (claims: JWTPayload, key: typeof providerKey = providerKey): Promise<string> => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    sub: 'local-support-user',
    email: 'support@example.com',
    'cognito:groups': ['support'],
    iss: oidc.issuer,
    aud: oidc.clientId,
    iat: now,
    exp: now + 3600,
    auth_time: now,
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .sign(await importJWK({ ...key, alg: 'RS256' }, 'RS256'));
};

/** The console API called as API Gateway calls it for `<method> /console/api/<path>`. */
const call = async (
  method: 'GET' | 'POST',
  path: string,
  authorization?: string,
  body?: unknown,
): Promise<APIGatewayProxyResult & { json: unknown }> => {
  const answer = (await handler(
    consoleApiEvent(method, path, authorization, body),
    lambdaContext(),
  )) as APIGatewayProxyResult;
  return { ...answer, json: JSON.parse(answer.body) };
};

/** Every route, each with a request a person allowed to make it makes. */
const routes = (): [string, 'GET' | 'POST', string, unknown][] => [
  ['GET me', 'GET', 'me', undefined],
  ['GET records/{id}', 'GET', `records/${seeded.other.id}`, undefined],
  ['GET records', 'GET', 'records', undefined],
  ['GET failed', 'GET', 'failed', undefined],
  ['GET downstreams', 'GET', 'downstreams', undefined],
  ['GET webhooks', 'GET', 'webhooks', undefined],
  ['GET activity', 'GET', 'activity', undefined],
  ['POST records/redrive', 'POST', 'records/redrive', { ids: [seeded.other.id] }],
  ['GET records/{id}/customer', 'GET', `records/${seeded.other.id}/customer`, undefined],
  ['GET records/{id}/trace', 'GET', `records/${seeded.other.id}/trace`, undefined],
  ['POST records/{id}/webhook/resend', 'POST', `records/${seeded.other.id}/webhook/resend`, undefined],
  ['POST webhooks/{client}/enable', 'POST', 'webhooks/example-dealer/enable', undefined],
  ['GET audit', 'GET', 'audit', undefined],
];

/** The headers every console answer carries, whatever its status. */
const expectSecurityHeaders = (answer: APIGatewayProxyResult) => {
  const headers = answer.headers ?? {};
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
  expect(headers['content-security-policy']).not.toMatch(/unsafe-inline/);
};

const refusals: [string, () => Promise<string | undefined>][] = [
  ['no token', async () => undefined],
  ['a malformed token', async () => 'Bearer not.a-jwt'],
  ['a header without the Bearer scheme', async () => `Basic ${Buffer.from('a:b').toString('base64')}`],
  [
    'a forged token (signed by another key under the same kid)',
    async () => `Bearer ${await signed({}, forgerKey)}`,
  ],
  ['a token of another issuer', async () => `Bearer ${await signed({ iss: 'http://127.0.0.1:1' })}`],
  ['a token for another audience', async () => `Bearer ${await signed({ aud: 'another-client' })}`],
  [
    'an expired token',
    async () => {
      const past = Math.floor(Date.now() / 1000) - 2 * 3600;
      return `Bearer ${await signed({ iat: past, exp: past + 3600, auth_time: past })}`;
    },
  ],
  [
    'a token of a sign-in more than 12 hours old',
    async () => `Bearer ${await signed({ auth_time: Math.floor(Date.now() / 1000) - 13 * 3600 })}`,
  ],
];

describe('the console API refuses every request without a valid session', () => {
  it('tries every route of the route table (a route added later is refused too, or this fails)', () => {
    // Act
    const untried = CONSOLE_ROUTES.filter(
      (route) => !routes().some(([, method, path]) => method === route.method && route.path.test(path)),
    ).map((route) => `${route.method} ${route.path}`);
    // Assess
    expect(untried).toEqual([]);
  });

  for (const [label, authorization] of refusals) {
    it(`answers 401 with WWW-Authenticate: Bearer to ${label}, on every route`, async () => {
      // Prepare
      const header = await authorization();
      for (const [route, method, path, body] of routes()) {
        // Act
        const answer = await call(method, path, header, body);
        // Assess
        expect(answer.statusCode, route).toBe(401);
        expect(answer.headers?.['www-authenticate'], route).toMatch(/^Bearer realm="/);
        expect(answer.json, route).toEqual({ message: expect.any(String) });
        expectSecurityHeaders(answer);
      }
      expect((await getStatusRecord(seeded.other.id))?.status).toBe('failed');
    });
  }

  it('answers 401 to a token of a sign-in without auth_time', async () => {
    // Act
    const answer = await call('GET', 'me', `Bearer ${await signed({ auth_time: undefined })}`);
    // Assess
    expect(answer.statusCode).toBe(401);
  });
});

describe('the console API with a valid session', () => {
  it('tells each person who they are and their roles', async () => {
    // Act
    const support = await call('GET', 'me', `Bearer ${tokens.support}`);
    const operator = await call('GET', 'me', `Bearer ${tokens.operator}`);
    // Assess
    expect([support.statusCode, support.json]).toEqual([
      200,
      { email: 'support@example.com', roles: ['support'] },
    ]);
    expect([operator.statusCode, operator.json]).toEqual([
      200,
      { email: 'operator@example.com', roles: ['operators'] },
    ]);
    expectSecurityHeaders(support);
  });

  it("shows any client's record to support, without its personal fields; 404 for an unknown or malformed id", async () => {
    // Act
    const found = await call('GET', `records/${seeded.other.id}`, `Bearer ${tokens.support}`);
    const unknown = await call(
      'GET',
      `records/${randomBytes(16).toString('hex')}`,
      `Bearer ${tokens.support}`,
    );
    const malformed = await call('GET', 'records/not-an-id', `Bearer ${tokens.support}`);
    // Assess
    expect(found.statusCode).toBe(200);
    expect(found.json).toEqual({
      id: seeded.other.id,
      kind: 'crmCase',
      client: 'example-web-forms',
      frameNumber: null,
      state: 'failed',
      status: 'failed',
      attempts: 3,
      acceptedAt: seeded.other.acceptedAt,
      updatedAt: seeded.other.updatedAt,
      test: false,
      downstream: 'crm',
      hasCustomer: true,
      timeline: [
        { at: seeded.other.acceptedAt, type: 'accepted', client: 'example-web-forms' },
        { at: seeded.other.updatedAt, type: 'final', state: 'failed' },
      ],
    });
    expect(found.body).not.toContain(String((seeded.other.record as { email?: string }).email));
    expect([unknown.statusCode, malformed.statusCode]).toEqual([404, 404]);
    expectSecurityHeaders(unknown);
  });

  it('answers every list to support and operators, and to a person with no console role 403', async () => {
    // Prepare
    const noRole = `Bearer ${await signed({ 'cognito:groups': ['someone-else'] })}`;
    for (const path of ['records', 'failed', 'downstreams', 'webhooks', 'activity']) {
      // Act
      const support = await call('GET', path, `Bearer ${tokens.support}`);
      const operator = await call('GET', path, `Bearer ${tokens.operator}`);
      const refused = await call('GET', path, noRole);
      // Assess
      expect([support.statusCode, operator.statusCode, refused.statusCode], path).toEqual([200, 200, 403]);
      expectSecurityHeaders(support);
    }
  });

  it('refuses the redrive to support (403) and changes nothing', async () => {
    // Prepare
    const before = await getStatusRecord(seeded.failed.id);
    const published = bus.entries.length;
    // Act
    const answer = await call('POST', 'records/redrive', `Bearer ${tokens.support}`, {
      ids: [seeded.failed.id],
    });
    // Assess
    expect(answer.statusCode).toBe(403);
    expect(answer.json).toEqual({ message: expect.stringMatching(/operators/) });
    expectSecurityHeaders(answer);
    expect(await getStatusRecord(seeded.failed.id)).toEqual(before);
    expect(await aws.drain(aws.resources.queues.CaseQueue.url)).toEqual([]);
    expect(bus.entries.length).toBe(published);
  });

  it('lets an operator redrive the chosen failed records: accepted again, queued, the others left alone', async () => {
    // Prepare
    const stranger = randomBytes(16).toString('hex');
    // Act
    const answer = await call('POST', 'records/redrive', `Bearer ${tokens.operator}`, {
      ids: [seeded.failed.id, stranger],
    });
    // Assess
    expect(answer.statusCode).toBe(200);
    expect(answer.json).toEqual({
      redriven: [seeded.failed.id],
      skipped: [{ id: stranger, reason: 'not failed' }],
    });
    expectSecurityHeaders(answer);
    expect((await getStatusRecord(seeded.failed.id))?.status).toBe('accepted');
    expect((await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id)).toEqual([
      seeded.failed.id,
    ]);
  });

  it('refuses a redrive body that names no record ids (400), and an unknown route (404)', async () => {
    // Act
    const empty = await call('POST', 'records/redrive', `Bearer ${tokens.operator}`, { ids: [] });
    const bad = await call('POST', 'records/redrive', `Bearer ${tokens.operator}`, { ids: ['x'] });
    const unknown = await call('GET', 'nothing-here', `Bearer ${tokens.operator}`);
    const method = await call('POST', 'me', `Bearer ${tokens.operator}`);
    // Assess
    expect([empty.statusCode, bad.statusCode, unknown.statusCode, method.statusCode]).toEqual([
      400, 400, 404, 405,
    ]);
    expect(bad.json).toEqual({ message: 'ids[0] is not a record id' });
  });
});

/** A moment, so that spans made one after the other start apart. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

describe("a record's trace, from the spans npm start keeps", () => {
  let dataDir: string;
  let receiver: Awaited<ReturnType<typeof startTraceReceiver>>;
  let stopWatching: () => void;
  let processor: SimpleSpanProcessor;
  const ids: Record<string, string> = {};
  let traced: StatusRecord;

  beforeAll(async () => {
    // Prepare: the project's spans, exported by OTLP to npm start's own receiver, which keeps them in its file.
    dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-console-trace-'));
    receiver = await startTraceReceiver({ dataDir });
    processor = new SimpleSpanProcessor({
      exporter: new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }),
    });
    stopWatching = watchSpans(processor);
    const named = (key: string, span: Span) => {
      ids[key] = span.spanContext().spanId;
      return traceparentOfSpan(span) as string;
    };
    let intake = '';
    await inSpan('POST /erp/sales_registration', { root: true, kind: 'server' }, async (span) => {
      span.setAttribute('http.response.status_code', 200);
      intake = named('intake', span);
    });
    await tick();
    const failedAttempt = startSpan('deliver salesRegistration', { parent: intake, kind: 'consumer' });
    named('failedAttempt', failedAttempt);
    failSpan(failedAttempt, 'transient', 503);
    failedAttempt.end();
    await tick();
    const attempt = startSpan('deliver salesRegistration', { parent: intake, kind: 'consumer' });
    const attemptParent = named('attempt', attempt);
    // Another record's trace: its attempt shares the batched call, its request is not drawn.
    let otherIntake = '';
    await inSpan('POST /erp/sales_registration', { root: true, kind: 'server' }, async (span) => {
      otherIntake = named('otherIntake', span);
    });
    const otherAttempt = startSpan('deliver salesRegistration', { parent: otherIntake, kind: 'consumer' });
    const call = startSpan('erp call', {
      root: true,
      links: [attemptParent, traceparentOfSpan(otherAttempt)],
    });
    const callParent = named('call', call);
    await tick();
    const batch = startSpan('SAP $batch', { parent: callParent, kind: 'client' });
    named('batch', batch);
    batch.setAttribute('http.response.status_code', 202);
    batch.end();
    call.end();
    otherAttempt.end();
    attempt.end();
    await processor.forceFlush();
    traced = acceptedCase({ traceparent: intake });
    await seedStatusRecords([traced]);
  });
  afterAll(async () => {
    stopWatching?.();
    delete process.env.TRACES_FILE;
    resetSettings();
    await receiver?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('draws the record’s spans and the batched call linked to it, in order, with depth, errors and HTTP statuses', async () => {
    // Prepare: as npm start tells the console API (local/traceReceiver.ts env)
    Object.assign(process.env, { TRACES_FILE: receiver.env.TRACES_FILE });
    resetSettings();
    // Act
    const answer = await call('GET', `records/${traced.id}/trace`, `Bearer ${tokens.support}`);
    // Assess
    expect(answer.statusCode).toBe(200);
    expectSecurityHeaders(answer);
    const { traceId, spans } = answer.json as {
      traceId: string;
      spans: { spanId: string; startMs: number; durationMs: number }[];
    };
    expect(traceId).toBe(traceIdOf(traced.traceparent));
    expect(spans.map(({ startMs, durationMs, ...row }) => row)).toEqual([
      {
        spanId: ids.intake,
        name: 'POST /erp/sales_registration',
        status: 'ok',
        statusCode: 200,
        linked: false,
        depth: 0,
      },
      {
        spanId: ids.failedAttempt,
        parentSpanId: ids.intake,
        name: 'deliver salesRegistration',
        status: 'error',
        statusCode: 503,
        linked: false,
        depth: 1,
      },
      {
        spanId: ids.attempt,
        parentSpanId: ids.intake,
        name: 'deliver salesRegistration',
        status: 'ok',
        linked: false,
        depth: 1,
      },
      { spanId: ids.call, name: 'erp call', status: 'ok', linked: true, depth: 2 },
      {
        spanId: ids.batch,
        parentSpanId: ids.call,
        name: 'SAP $batch',
        status: 'ok',
        statusCode: 202,
        linked: true,
        depth: 3,
      },
    ]);
    // Times after the trace's first span: the request first, each later span later, none negative.
    expect(spans[0].startMs).toBe(0);
    expect(spans[1].startMs).toBeGreaterThan(0);
    expect(spans[2].startMs).toBeGreaterThan(spans[1].startMs);
    expect(spans.every((row) => row.durationMs >= 0)).toBe(true);
    expect(answer.body).not.toContain(String((traced.record as { email?: string }).email));
  });

  it('answers 404 for a record without a trace, and where no spans are kept (AWS), naming the trace there', async () => {
    // Prepare
    const untraced = seeded.other.id;
    delete process.env.TRACES_FILE;
    resetSettings();
    // Act
    const noFile = await call('GET', `records/${traced.id}/trace`, `Bearer ${tokens.support}`);
    const noTrace = await call('GET', `records/${untraced}/trace`, `Bearer ${tokens.support}`);
    const noRole = await call(
      'GET',
      `records/${traced.id}/trace`,
      `Bearer ${await signed({ 'cognito:groups': ['someone-else'] })}`,
    );
    // Assess
    expect([noFile.statusCode, noFile.json]).toEqual([
      404,
      { message: expect.stringMatching(/^traces are kept by npm start only: .*[0-9a-f]{32}/) },
    ]);
    expect([noTrace.statusCode, noTrace.json]).toEqual([
      404,
      { message: expect.stringMatching(/before tracing/) },
    ]);
    expect(noRole.statusCode).toBe(403);
  });
});
