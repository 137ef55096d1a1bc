/**
 * A record's story (lib/records/story.ts) and the console routes built on it, end to end through the real code:
 * a sale accepted by the sales handler, delivered by the worker (deliverRecord) to the SAP sandbox, its event
 * published to a recording bus (and its feed entry written), its webhook posted by the dispatcher, all against
 * dynalite and fauxqs; the console API called through its Lambda handler with ID tokens of the real local OpenID
 * Connect provider. A webhook post is captured by a plain HTTP server and verified with the `standardwebhooks`
 * package, as an integrator would.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult, SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/consoleApi.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { dynamoClient } from '../../lib/aws/clients.ts';
import { DeleteItemCommand, GetItemCommand, ScanCommand } from '../../lib/aws/jsonProtocol/dynamodb.ts';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { claimMessage } from '../../lib/delivery/claimMessage.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { parseQueuedRecord } from '../../lib/delivery/message.ts';
import { recordOutcome } from '../../lib/delivery/recordOutcome.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { encodeStoryEntry, STORY_LIMIT, WEBHOOK_STORY_LIMIT } from '../../lib/records/story.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import type { DeliverySettings } from '../../lib/settings/settings.ts';
import { recordsTable } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { noteWebhookAttempt } from '../../lib/store/webhookStory.ts';
import { tableWebhookSwitch } from '../../lib/webhooks/disabledWebhooks.ts';
import { createWebhookDispatcher } from '../../lib/webhooks/dispatcher.ts';
import { newWebhookSecret } from '../../lib/webhooks/secrets.ts';
import { type LocalOidcProvider, startLocalOidcProvider } from '../../local/oidcProvider.ts';
import { startLocalSecretsManager } from '../../local/secretsManager.ts';
import { localWebhookRoutes, redirectWebhookCalls } from '../../local/webhookRoutes.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { consoleApiEvent, devUserToken } from '../../testkit/consoleSignIn.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { receivedSqsRecord } from '../../testkit/factories/sqsRecords.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const apiUrl = 'http://localhost:39004';
const SECRETS_PREFIX = 'dealer-gateway/story/webhooks/';
/** The customer of the sale: a downstream error echoes these, and none may reach the story. */
const CUSTOMER = { Name: 'Quillfeather', Name2: 'Zebediah', email: 'zebediah.quill@example.com' };
const settings: DeliverySettings = { maxAttempts: 5, retryBaseSeconds: 10, leaseSeconds: 90 };

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let oidc: LocalOidcProvider;
let sap: SapSandbox;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
let secretsManager: Awaited<ReturnType<typeof startLocalSecretsManager>>;
let undoRedirect: () => void;
const secret = newWebhookSecret();
const tokens = { support: '', operator: '' };
/** The webhook posts that reached the capture server (standing in for example-dealer's receiver). */
const posts: { headers: IncomingHttpHeaders; body: string }[] = [];
const capture = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    posts.push({ headers: request.headers, body });
    response.writeHead(200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
  const captureUrl = `http://127.0.0.1:${(capture.address() as AddressInfo).port}`;
  [aws, oidc, sap, bus, secretsManager] = await Promise.all([
    isolatedAws(),
    startLocalOidcProvider({ apiUrl }),
    startSapSandbox(),
    startEventBridgeRecorder(),
    startLocalSecretsManager((name) => (name.startsWith(SECRETS_PREFIX) ? secret : undefined)),
  ]);
  Object.assign(process.env, {
    ...oidc.env,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-story',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
    WEBHOOK_SECRETS_PREFIX: SECRETS_PREFIX,
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    OUTAGE_AFTER_FAILURES: '1000',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  resetDownstreamClients();
  // As npm start does: the declared (remote) webhook URLs are called at a server of this machine instead.
  undoRedirect = redirectWebhookCalls(
    localWebhookRoutes({ clients: clientsConfig.clients, receiverUrl: captureUrl }),
  );
  tokens.support = await devUserToken(oidc, apiUrl, 'support@example.com');
  tokens.operator = await devUserToken(oidc, apiUrl, 'operator@example.com');
});
afterAll(async () => {
  undoRedirect?.();
  await Promise.all([
    oidc?.stop(),
    sap?.stop(),
    bus?.stop(),
    secretsManager?.stop(),
    new Promise((resolve) => capture.close(resolve)),
  ]);
});

/** The console API called as API Gateway calls it. */
const call = async (
  method: 'GET' | 'POST',
  path: string,
  role?: keyof typeof tokens,
  body?: unknown,
): Promise<APIGatewayProxyResult & { json: Record<string, unknown> }> => {
  const answer = (await handler(
    consoleApiEvent(method, path, role ? `Bearer ${tokens[role]}` : undefined, body),
    lambdaContext(),
  )) as APIGatewayProxyResult;
  return { ...answer, json: JSON.parse(answer.body) };
};

/** A sale accepted through the sales handler, and its message as the event source hands it over. */
const acceptedSale = async () => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', [
      salesRegistrationInput({ FrameNum: uniqueFrame('STY'), ...CUSTOMER }),
    ]),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  const sqsRecord = await receivedSqsRecord(aws.sqs, aws.resources.queues.SalesRegistrationQueue.url);
  return { id: parseQueuedRecord(sqsRecord.body).id, sqsRecord };
};

const batch = () => ({ settings, log: logger, tally: new OutcomeTally() });
const storedItem = (id: string) =>
  dynamoClient().send(
    new GetItemCommand({ TableName: recordsTable(), Key: { pk: { S: id } }, ConsistentRead: true }),
  );
const mentionsCustomer = (text: string) =>
  [CUSTOMER.Name, CUSTOMER.Name2, CUSTOMER.email].some((value) => text.includes(value));

describe("a record's story in its timeline", () => {
  it('records each attempt with its status, redacted message and duration, the final state and each webhook attempt; resends with the same webhook-id', async () => {
    // Prepare: SAP answers the first try 503 after 120 ms, echoing the customer's name and email; the second try delivers.
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    const { id, sqsRecord } = await acceptedSale();
    sap.inject({
      status: 503,
      message: `${CUSTOMER.Name2} ${CUSTOMER.Name} <${CUSTOMER.email}>: system busy`,
      delayMs: 120,
    });
    await expect(deliverRecord(sqsRecord, batch())).rejects.toThrow();
    await deliverRecord(sqsRecord, batch());
    const [event] = bus.details().filter((detail) => detail.recordId === id);
    const dispatch = createWebhookDispatcher({
      targetOf: () => ({
        url: 'https://dealer-1234.example.com/dealer-gateway/events',
        rateLimitPerSecond: 100,
      }),
      secretsOf: async () => ({ current: secret }),
      flags: tableWebhookSwitch(),
      retryIn: async () => {},
    });
    await dispatch(
      {
        Records: [
          {
            ...sqsRecord,
            messageId: 'w1',
            body: JSON.stringify({ detail: event }),
            attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
          } as unknown as SQSRecord,
        ],
      } as SQSEvent,
      lambdaContext(),
    );
    posts.length = 0;
    // Act
    const view = await call('GET', `records/${id}`, 'support');
    const refusedResend = await call('POST', `records/${id}/webhook/resend`, 'support');
    const resent = await call('POST', `records/${id}/webhook/resend`, 'operator');
    const audit = await call('GET', 'audit', 'operator');
    // Assess
    const timeline = view.json.timeline as Record<string, unknown>[];
    expect(view.statusCode).toBe(200);
    expect(view.json).toMatchObject({
      id,
      kind: 'salesRegistration',
      client: 'example-dealer',
      state: 'delivered',
      downstream: 'erp',
      hasCustomer: true,
      lastWebhookId: event.eventId,
    });
    expect(timeline.map((entry) => entry.type)).toEqual([
      'accepted',
      'attempt',
      'attempt',
      'final',
      'webhook',
    ]);
    expect(timeline[0]).toMatchObject({ type: 'accepted', client: 'example-dealer' });
    expect(timeline[1]).toMatchObject({ type: 'attempt', downstream: 'erp', status: 503 });
    expect(timeline[1].message).toContain('system busy');
    expect(timeline[1].durationMs).toBeGreaterThanOrEqual(120);
    expect(timeline[2]).toMatchObject({ type: 'attempt', downstream: 'erp', status: 201 });
    expect(timeline[2]).not.toHaveProperty('message');
    expect(timeline[3]).toMatchObject({ type: 'final', state: 'delivered' });
    expect(timeline[4]).toMatchObject({
      type: 'webhook',
      client: 'example-dealer',
      webhookId: event.eventId,
      status: 200,
    });
    // No personal data in the story, as stored nor as answered.
    const stored = (await storedItem(id)).Item ?? {};
    expect(mentionsCustomer(JSON.stringify([stored.story, stored.webhookStory]))).toBe(false);
    expect(mentionsCustomer(view.body)).toBe(false);
    // The resend: refused to support, sent by the operator with the same webhook-id, verifiable, audited.
    expect(refusedResend.statusCode).toBe(403);
    expect(resent).toMatchObject({ statusCode: 200, json: { webhookId: event.eventId, status: 200 } });
    expect(posts).toHaveLength(1);
    expect(posts[0].headers['webhook-id']).toBe(event.eventId);
    const verified = new Webhook(secret).verify(posts[0].body, posts[0].headers as Record<string, string>);
    expect(verified).toMatchObject({ type: 'record.delivered', data: { recordId: id } });
    const webhookEntries = ((await getStatusRecord(id))?.webhookStory ?? []).length;
    expect(webhookEntries).toBe(2);
    expect((audit.json.entries as unknown[])[0]).toMatchObject({
      who: 'operator@example.com',
      action: 'resend-webhook',
      records: [id],
      client: 'example-dealer',
    });
  }, 60_000);

  it('records a wait in the hold when a held downstream gives the try back', async () => {
    // Prepare: a sale claimed, its call under way when the hold opened (the outcome's hold is held).
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    const { id, sqsRecord } = await acceptedSale();
    const now = new Date();
    const claimed = await claimMessage(
      { sqsRecord, message: parseQueuedRecord(sqsRecord.body) },
      'erp',
      batch(),
      now,
      new Date(now.getTime() + 90_000).toISOString(),
    );
    const heldSince = new Date(now.getTime() - 60_000).toISOString();
    const nextProbeAt = new Date(now.getTime() + 30_000).toISOString();
    // Act
    const outcome = recordOutcome(
      claimed as NonNullable<typeof claimed>,
      { kind: 'transient', error: 'HTTP 503', reachedDownstream: true },
      'erp',
      batch(),
      { at: now, hold: { held: true, heldSince, nextProbeAt }, probeSeconds: 30, durationMs: 42 },
    );
    await expect(outcome).rejects.toMatchObject({ name: 'DeliveryHeldError' });
    const view = await call('GET', `records/${id}`, 'support');
    // Assess: the try given back (the existing fields as before), the attempt and the wait in the timeline.
    expect((await getStatusRecord(id))?.tries).toBe(0);
    expect((view.json.timeline as unknown[]).slice(1)).toEqual([
      {
        at: now.toISOString(),
        type: 'attempt',
        downstream: 'erp',
        status: 503,
        message: 'HTTP 503',
        durationMs: 42,
      },
      { at: now.toISOString(), type: 'held', downstream: 'erp', heldSince, until: nextProbeAt },
    ]);
  }, 30_000);

  it('records a redrive and who made it, keeps the newest entries only, and audits it', async () => {
    // Prepare: a failed case whose story is full.
    const full = Array.from({ length: STORY_LIMIT }, (_, i) =>
      encodeStoryEntry(
        {
          at: `2026-11-22T08:${String(i).padStart(2, '0')}:00.000Z`,
          type: 'attempt',
          downstream: 'crm',
          status: 503,
          durationMs: i,
        },
        { recordId: 'f'.repeat(32) },
      ),
    );
    const failed = acceptedCase({
      status: 'failed',
      openKind: undefined,
      dueAt: undefined,
      attempts: 5,
      updatedAt: '2026-11-22T09:00:00.000Z',
      story: full,
    });
    await seedStatusRecords([failed]);
    // Act
    const redriven = await call('POST', 'records/redrive', 'operator', { ids: [failed.id] });
    const audit = await call('GET', 'audit', 'operator');
    const record = (await getStatusRecord(failed.id)) as StatusRecord;
    // Assess
    expect(redriven).toMatchObject({ statusCode: 200, json: { redriven: [failed.id], skipped: [] } });
    expect(record.story).toHaveLength(STORY_LIMIT);
    expect(record.story?.[0]).toBe(full[1]);
    expect(record.story?.at(-1)).toMatch(/^r\|[0-9a-z]+\|operator@example\.com$/);
    const view = await call('GET', `records/${failed.id}`, 'support');
    expect(
      (view.json.timeline as Record<string, unknown>[]).find((entry) => entry.type === 'redrive'),
    ).toMatchObject({
      by: 'operator@example.com',
    });
    expect((audit.json.entries as unknown[])[0]).toMatchObject({
      who: 'operator@example.com',
      action: 'redrive',
      records: [failed.id],
    });
  }, 30_000);

  it('keeps the newest webhook attempts only, and writes none once the record is gone (the story is the record item)', async () => {
    // Prepare
    const record = acceptedCase();
    await seedStatusRecords([record]);
    const note = (i: number) => ({
      at: new Date(Date.UTC(2026, 10, 22, 9, 0, i)).toISOString(),
      type: 'webhook' as const,
      client: 'example-web-forms',
      webhookId: `${record.id}:${i}`,
      status: 500,
      durationMs: i,
    });
    // Act
    for (let i = 0; i < WEBHOOK_STORY_LIMIT + 2; i++) await noteWebhookAttempt(record.id, note(i));
    const kept = (await getStatusRecord(record.id))?.webhookStory ?? [];
    // The record expires (DynamoDB's TTL deletes the item): its story goes with it, and nothing writes one back.
    await dynamoClient().send(
      new DeleteItemCommand({ TableName: recordsTable(), Key: { pk: { S: record.id } } }),
    );
    const afterExpiry = await noteWebhookAttempt(record.id, note(99));
    const scan = await dynamoClient().send(new ScanCommand({ TableName: recordsTable() }));
    // Assess
    expect(kept).toHaveLength(WEBHOOK_STORY_LIMIT);
    expect(kept[0]).toBe(encodeStoryEntry(note(2), { recordId: record.id }));
    expect(afterExpiry).toBe(false);
    expect(JSON.stringify(scan.Items ?? [])).not.toContain(record.id);
  }, 30_000);
});

describe('the customer view, the webhook switch and the audit log', () => {
  it("shows the customer's fields to support and audits the view; 404 once purged; the audit log is the operators'", async () => {
    // Prepare
    const record = acceptedCase({ status: 'delivered', openKind: undefined, dueAt: undefined });
    const purged = acceptedCase({
      status: 'delivered',
      openKind: undefined,
      dueAt: undefined,
      personalDataRemovedAt: '2026-12-22T08:00:00.000Z',
    });
    await seedStatusRecords([record, purged]);
    const email = (record.record as { email: string }).email;
    // Act
    const shown = await call('GET', `records/${record.id}/customer`, 'support');
    const gone = await call('GET', `records/${purged.id}/customer`, 'support');
    const supportAudit = await call('GET', 'audit', 'support');
    const audit = await call('GET', 'audit', 'operator');
    const view = await call('GET', `records/${purged.id}`, 'support');
    // Assess
    expect(shown.statusCode).toBe(200);
    expect((shown.json.customer as { email: string }).email).toBe(email);
    expect(gone.statusCode).toBe(404);
    expect(view.json.hasCustomer).toBe(false);
    expect(supportAudit.statusCode).toBe(403);
    expect(audit.statusCode).toBe(200);
    const entries = audit.json.entries as Record<string, unknown>[];
    expect(entries[0]).toEqual({
      at: expect.any(String),
      who: 'support@example.com',
      action: 'view-customer',
      records: [record.id],
    });
    expect(entries.filter((entry) => (entry.records as string[]).includes(purged.id))).toEqual([]);
    expect(audit.body).not.toContain(email);
  }, 30_000);

  it('enables a disabled webhook for an operator, audited; refuses support (403) with nothing changed', async () => {
    // Prepare
    const flags = tableWebhookSwitch();
    await flags.disable('example-dealer', { at: new Date().toISOString(), status: 410 });
    // Act
    const refused = await call('POST', 'webhooks/example-dealer/enable', 'support');
    const stillDisabled = await flags.disabled('example-dealer');
    const enabled = await call('POST', 'webhooks/example-dealer/enable', 'operator');
    const unknown = await call('POST', 'webhooks/no-such-client/enable', 'operator');
    const audit = await call('GET', 'audit', 'operator');
    // Assess
    expect(refused.statusCode).toBe(403);
    expect(stillDisabled).toMatchObject({ status: 410 });
    expect(enabled).toMatchObject({ statusCode: 200, json: { client: 'example-dealer', enabled: true } });
    expect(await flags.disabled('example-dealer')).toBeUndefined();
    expect(unknown.statusCode).toBe(404);
    expect((audit.json.entries as unknown[])[0]).toMatchObject({
      who: 'operator@example.com',
      action: 'enable-webhook',
      records: [],
      client: 'example-dealer',
    });
  }, 30_000);
});
