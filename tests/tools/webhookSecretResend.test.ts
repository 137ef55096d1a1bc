/**
 * `npm run webhook-secret -- resend --client <client> --record <id>` (tools/webhookSecret/run.ts) against what a
 * running npm start leaves: its runner.json naming dynalite (a sale accepted by the sales handler and delivered by the
 * worker code to the SAP sandbox, its event in the feed), its Secrets Manager of webhook secrets and its sandbox
 * receiver (a plain HTTP server here). The post is verified with the `standardwebhooks` package, as an integrator would.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { lastEventIdOf } from '../../lib/records/stateChange.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { newWebhookSecret } from '../../lib/webhooks/secrets.ts';
import { startLocalSecretsManager } from '../../local/secretsManager.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { receivedSqsRecord } from '../../testkit/factories/sqsRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { runWebhookSecret } from '../../tools/webhookSecret/run.ts';

const PREFIX = 'dealer-gateway/resend-tool/webhooks/';
const secret = newWebhookSecret();
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
let secretsManager: Awaited<ReturnType<typeof startLocalSecretsManager>>;
let dir: string;
/** The sale delivered, and its last event's id (the webhook-id it was sent with). */
let sale: { id: string; eventId: string };
/** What reached the stand-in for npm start's sandbox receiver. */
const posts: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    posts.push({ url: request.url ?? '', headers: request.headers, body });
    response.writeHead(200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  [aws, sap, bus, secretsManager, dir] = await Promise.all([
    isolatedAws(),
    startSapSandbox(),
    startEventBridgeRecorder(),
    startLocalSecretsManager((name) => (name.startsWith(PREFIX) ? secret : undefined)),
    mkdtemp(join(tmpdir(), 'dealer-gateway-resend-tool-')),
  ]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-resend-tool',
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  resetDownstreamClients();
  // A sale accepted and delivered: its `record.delivered` event is in the feed.
  const accepted = await salesHandler(
    jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame('RSND') })]),
    lambdaContext(),
  );
  expect(accepted.statusCode).toBe(200);
  const sqsRecord = await receivedSqsRecord(aws.sqs, aws.resources.queues.SalesRegistrationQueue.url);
  await deliverRecord(sqsRecord, {
    settings: { maxAttempts: 5, retryBaseSeconds: 10, leaseSeconds: 90 },
    log: logger,
    tally: new OutcomeTally(),
  });
  const id = JSON.parse(sqsRecord.body).id as string;
  const delivered = await getStatusRecord(id);
  sale = { id, eventId: lastEventIdOf(delivered ?? { id, history: [] }) ?? '' };
  // What a running npm start writes for the operators' tools.
  await writeFile(
    join(dir, 'runner.json'),
    JSON.stringify({
      dynamoEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB,
      webhookReceiverUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      webhookSecretsPrefix: PREFIX,
      env: {
        RECORDS_TABLE: aws.resources.tables.RecordsTable.name,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
      },
    }),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all([
    sap?.stop(),
    bus?.stop(),
    secretsManager?.stop(),
    new Promise((resolve) => receiver.close(resolve)),
    dir ? rm(dir, { recursive: true, force: true }) : undefined,
  ]);
});

/** Runs the command on npm start's data directory; its exit code and output. */
const run = async (args: string[]) => {
  let out = '';
  let err = '';
  const code = await runWebhookSecret(
    args,
    { DATA_DIR: dir },
    { out: (t) => (out += t), err: (t) => (err += t) },
  );
  return { code, out, err };
};

describe('npm run webhook-secret -- resend', () => {
  it("sends the record's last event again to the client's webhook with the same webhook-id, verifiable, noted in its timeline", async () => {
    // Prepare
    posts.length = 0;
    const webhookEntries = (await getStatusRecord(sale.id))?.webhookStory?.length ?? 0;
    // Act
    const resent = await run(['resend', '--client', 'example-dealer', '--record', sale.id]);
    // Assess
    expect(sale.eventId).toMatch(new RegExp(`^${sale.id}:`));
    expect(resent).toEqual({
      code: 0,
      out: `${sale.id}: event ${sale.eventId} sent again to example-dealer's webhook: HTTP 200\n`,
      err: '',
    });
    expect(posts).toHaveLength(1);
    // Where npm start takes example-dealer's (remote) webhook: its sandbox receiver.
    expect(posts[0].url).toBe('/hooks/example-dealer');
    expect(posts[0].headers['webhook-id']).toBe(sale.eventId);
    const verified = new Webhook(secret).verify(posts[0].body, posts[0].headers as Record<string, string>);
    expect(verified).toMatchObject({ type: 'record.delivered', data: { recordId: sale.id } });
    expect((await getStatusRecord(sale.id))?.webhookStory).toHaveLength(webhookEntries + 1);
  });

  it('refuses, sending nothing, a record of another client and a record that does not exist (exit code 1)', async () => {
    // Prepare
    posts.length = 0;
    // Act
    const otherClient = await run(['resend', '--client', 'example-dealer-test', '--record', sale.id]);
    const unknown = await run(['resend', '--client', 'example-dealer', '--record', 'no-such-record']);
    // Assess
    expect(otherClient).toEqual({
      code: 1,
      out: '',
      err: `${sale.id}: the record is not of this client (it is example-dealer's)\n`,
    });
    expect(unknown).toEqual({ code: 1, out: '', err: 'no-such-record: no record with this id\n' });
    expect(posts).toEqual([]);
  });

  it.each([
    [['resend', '--client', 'example-dealer'], 'resend needs --record <id>'],
    [['resend', '--record', 'r1'], 'resend needs --client <client>'],
    [['resend', 'example-dealer', '--record', 'r1'], 'resend takes --client <client> --record <id>'],
    [['resend', '--client', 'example-dealer', '--record'], '--record needs a value'],
    [['resend', '--client', 'nobody', '--record', 'r1'], 'client "nobody" is not in config/clients.json'],
    [['resend', '--client', 'example-web-forms', '--record', 'r1'], 'declares no webhook'],
    [['enable', 'example-dealer', '--record', 'r1'], '--client and --record go with resend'],
  ])('%j: exit code 2, "%s" and the usage, nothing sent', async (args, message) => {
    // Prepare
    posts.length = 0;
    // Act
    const refused = await run(args);
    // Assess
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(message);
    expect(refused.err).toContain('npm run webhook-secret -- resend --client <client> --record <id>');
    expect(posts).toEqual([]);
  });
});
