import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { Client } from '../../lib/clients/types.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { loadAwsWebhookSecrets } from '../../lib/webhooks/awsSecrets.ts';
import { configuredTarget, dispatchWebhookMessage } from '../../lib/webhooks/dispatch.ts';
import { createRateLimiter } from '../../lib/webhooks/rateLimit.ts';
import { newWebhookSecret } from '../../lib/webhooks/secrets.ts';
import { signWebhook } from '../../lib/webhooks/signing.ts';
import { describeWebhookRoutes, localWebhookRoutes } from '../../local/webhookRoutes.ts';
import { ensureWebhookSecrets } from '../../local/webhookSecrets.ts';
import { startLocalWebhooks } from '../../local/webhooks.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../sandbox/webhookReceiver.ts';

const dirs: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-receiver-'));
  dirs.push(dir);
  return dir;
};

const secrets: Record<string, string> = { a: newWebhookSecret(), b: newWebhookSecret() };
const startReceiver = async (dir?: string) => {
  const receiver = await startWebhookReceiver({
    dataDir: dir,
    secretsOf: (client) => (secrets[client] ? [secrets[client]] : undefined),
  });
  cleanups.push(() => receiver.stop());
  return receiver;
};
/** Posts a body signed with `secret` (none: unsigned; `at`: the signature's time). */
const post = (
  receiver: WebhookReceiver,
  client: string,
  body: unknown,
  secret: string | null = secrets[client],
  at = new Date(),
) => {
  const text = JSON.stringify(body);
  const signature = secret ? signWebhook({ id: `id-${text}`, body: text, secrets: [secret], at }) : {};
  return fetch(`${receiver.url}/hooks/${client}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signature },
    body: text,
  });
};
const get = async <T = unknown>(receiver: WebhookReceiver, path: string) =>
  (await (await fetch(`${receiver.url}${path}`)).json()) as T;

describe('the sandbox webhook receiver', () => {
  it('keeps events whose signature verifies and lists them newest first, per client', async () => {
    // Prepare
    const receiver = await startReceiver();
    // Act
    const first = await post(receiver, 'a', { id: '1' });
    const second = await post(receiver, 'b', { id: '2' });
    const third = await post(receiver, 'a', { id: '3' });
    // Assess
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    const kept = (id: string, client: string) => ({
      client,
      receivedAt: expect.any(String),
      verified: true,
      webhookId: `id-{"id":"${id}"}`,
      event: { id },
    });
    expect(await get(receiver, '/hooks')).toEqual([kept('3', 'a'), kept('2', 'b'), kept('1', 'a')]);
    expect((await get<{ event: { id: string } }[]>(receiver, '/hooks/a')).map((r) => r.event.id)).toEqual([
      '3',
      '1',
    ]);
  });

  it('answers 401 to an unsigned, wrongly signed (another client’s secret), stale or tampered event, showing it unverified', async () => {
    // Prepare
    const receiver = await startReceiver();
    const text = JSON.stringify({ id: '5' });
    const tampered = signWebhook({ id: 'x', body: text, secrets: [secrets.a], at: new Date() });
    // Act
    const missing = await post(receiver, 'a', { id: '1' }, null);
    const wrong = await post(receiver, 'a', { id: '2' }, secrets.b);
    const stale = await post(receiver, 'a', { id: '3' }, secrets.a, new Date(Date.now() - 600_000));
    const changed = await fetch(`${receiver.url}/hooks/a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...tampered },
      body: JSON.stringify({ id: '6' }),
    });
    const unknown = await post(receiver, 'c', { id: '4' }, secrets.a);
    // Assess
    expect([missing.status, wrong.status, stale.status, changed.status, unknown.status]).toEqual([
      401, 401, 401, 401, 404,
    ]);
    expect(await missing.json()).toEqual({
      message: 'webhook signature not verified for a: Missing required headers',
    });
    const shown = await get<{ verified: boolean; verificationError: string }[]>(receiver, '/hooks');
    expect(shown.map((event) => [event.verified, event.verificationError])).toEqual([
      [false, 'No matching signature found'],
      [false, 'Message timestamp too old'],
      [false, 'No matching signature found'],
      [false, 'Missing required headers'],
    ]);
  });

  it('fails on demand (POST /hooks/_faults) without keeping the event, then recovers', async () => {
    // Prepare
    const receiver = await startReceiver();
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 503, count: 2, client: 'a' }),
    });
    // Act
    const statuses = [];
    for (const client of ['a', 'b', 'a', 'a'])
      statuses.push((await post(receiver, client, { client })).status);
    // Assess
    expect(statuses).toEqual([503, 200, 503, 200]);
    expect(await get(receiver, '/hooks/_faults')).toEqual({ faults: [] });
    expect(await get(receiver, '/hooks')).toHaveLength(2);
  });

  it('still lists what it received after a restart on the same data directory', async () => {
    // Prepare
    const dir = await dataDir();
    const before = await startReceiver(dir);
    await post(before, 'a', { id: 'kept' });
    await before.stop();
    // Act
    const after = await startReceiver(dir);
    // Assess
    expect(await get(after, '/hooks/a')).toEqual([
      {
        client: 'a',
        receivedAt: expect.any(String),
        verified: true,
        webhookId: expect.any(String),
        event: { id: 'kept' },
      },
    ]);
  });
});

describe('where npm start sends each webhook', () => {
  const clients: Client[] = [
    {
      name: 'remote',
      dealers: [],
      webhook: { url: 'https://dealer.example.com/events' },
    },
    {
      name: 'local',
      dealers: [],
      webhook: { url: 'http://localhost:4010/events', rateLimitPerSecond: 3 },
    },
    { name: 'none', dealers: [] },
  ];

  it('calls localhost webhooks as declared and sends the others to the sandbox receiver', () => {
    // Act
    const routes = localWebhookRoutes({ clients, receiverUrl: 'http://127.0.0.1:9' });
    // Assess
    expect(Object.fromEntries(routes)).toEqual({
      remote: {
        client: 'remote',
        declaredUrl: 'https://dealer.example.com/events',
        via: 'receiver',
        url: 'http://127.0.0.1:9/hooks/remote',
        rateLimitPerSecond: 10,
      },
      local: {
        client: 'local',
        declaredUrl: 'http://localhost:4010/events',
        via: 'declared',
        url: 'http://localhost:4010/events',
        rateLimitPerSecond: 3,
      },
    });
    expect(describeWebhookRoutes(routes)).toBe(
      'webhooks: remote → http://127.0.0.1:9/hooks/remote (sandbox receiver for https://dealer.example.com/events; LOCAL_WEBHOOKS=direct calls it); local → http://localhost:4010/events',
    );
  });

  it('calls every webhook as declared with LOCAL_WEBHOOKS=direct', () => {
    const routes = localWebhookRoutes({ clients, receiverUrl: 'http://x', direct: true });
    expect(routes.get('remote')?.url).toBe('https://dealer.example.com/events');
  });

  it('makes a whsec_ secret per webhook client once, and keeps it across starts', async () => {
    // Prepare
    const dir = await dataDir();
    // Act
    const first = ensureWebhookSecrets(dir, ['remote', 'local']);
    const again = ensureWebhookSecrets(dir, ['remote', 'local', 'new']);
    // Assess
    expect(first.created).toEqual(['remote', 'local']);
    expect(again.created).toEqual(['new']);
    expect(again.secrets.remote).toEqual(first.secrets.remote);
    expect(first.secrets.remote.current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'webhook-secrets.json'), 'utf8')))).toEqual([
      'remote',
      'local',
      'new',
    ]);
  });

  it('replaces the old file (secret names, whsec- values) with whsec_ secrets per client', async () => {
    // Prepare: the file as earlier versions wrote it.
    const dir = await dataDir();
    const file = join(dir, 'webhook-secrets.json');
    writeFileSync(
      file,
      JSON.stringify({ 'dealer-gateway/remote/webhook': 'whsec-abcdefghijklmnopqrstuvwxyz012345' }),
    );
    // Act
    const migrated = ensureWebhookSecrets(dir, ['remote']);
    // Assess
    expect(migrated.replaced).toEqual(['dealer-gateway/remote/webhook']);
    expect(migrated.created).toEqual(['remote']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ remote: migrated.secrets.remote.current });
  });

  it('refuses an invalid whsec_ value when the configuration is loaded, naming the client', async () => {
    // Prepare
    const dir = await dataDir();
    writeFileSync(join(dir, 'webhook-secrets.json'), JSON.stringify({ remote: 'whsec_dG9vIHNob3J0' }));
    // Act / Assess
    expect(() => ensureWebhookSecrets(dir, ['remote'])).toThrow(
      'the webhook secret of client "remote" must be whsec_ followed by the base64 of 24 to 64 bytes',
    );
    await expect(startLocalWebhooks({ dataDir: dir, clients, busNames: ['bus'] })).rejects.toThrow(
      'client "remote"',
    );
  });

  it('npm start’s wiring: the real dispatcher’s try of a remote webhook reaches the receiver, signed with the secret the local Secrets Manager serves', async () => {
    // Prepare: the dispatcher's settings as npm start gives them (its Secrets Manager, the template's prefix).
    const dir = await dataDir();
    const webhooks = await startLocalWebhooks({
      dataDir: dir,
      clients: clientsConfig.clients,
      busNames: ['bus'],
    });
    cleanups.push(() => webhooks.stop());
    webhooks.useSecretsPrefix('dealer-gateway/local/webhooks/');
    const saved = { ...process.env };
    cleanups.push(async () => {
      process.env = saved;
      resetSettings();
    });
    Object.assign(process.env, webhooks.env, {
      WEBHOOK_SECRETS_PREFIX: 'dealer-gateway/local/webhooks/',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    resetSettings();
    const event = {
      eventId: 'r1:2026-11-27T00:00:00.000Z',
      client: 'example-dealer',
      recordId: 'r1',
      kind: 'caseRecord',
      state: 'delivered',
      previousState: 'accepted',
      attempts: 1,
      sequence: 1,
      at: '2026-11-27T00:00:00.000Z',
    };
    const record = {
      messageId: 'm1',
      receiptHandle: 'h1',
      body: JSON.stringify({ detail: event }),
      attributes: { ApproximateReceiveCount: '1' },
    } as unknown as SQSRecord;
    // Act: one try, as functions/webhookDispatcher.ts makes it, to the URL config/clients.json declares.
    const result = await dispatchWebhookMessage(record, {
      targetOf: configuredTarget,
      secretsOf: loadAwsWebhookSecrets,
      flags: { disabled: async () => undefined, disable: async () => {}, enable: async () => false },
      limiter: createRateLimiter(),
      retryIn: async () => {},
      rotationWindowMs: 0,
    });
    // Assess
    expect(configuredTarget('example-dealer')?.url).toMatch(/^https:\/\/dealer-1234\.example\.com\//);
    expect(result).toEqual({ outcome: 'delivered', client: 'example-dealer', status: 200 });
    expect(webhooks.receiver.received('example-dealer')).toEqual([
      expect.objectContaining({
        client: 'example-dealer',
        verified: true,
        webhookId: 'r1:2026-11-27T00:00:00.000Z',
        event: expect.objectContaining({ type: 'record.delivered' }),
      }),
    ]);
    expect(webhooks.env).toEqual({
      AWS_ENDPOINT_URL_EVENTBRIDGE: webhooks.bus.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      LOCAL_WEBHOOK_RECEIVER_URL: webhooks.receiver.url,
    });
  });

  it('answers GetSecretValue only for a webhook client under the prefix', async () => {
    // Prepare
    const dir = await dataDir();
    const webhooks = await startLocalWebhooks({ dataDir: dir, clients, busNames: ['bus'] });
    cleanups.push(() => webhooks.stop());
    webhooks.useSecretsPrefix('p/');
    const get = (SecretId: string) =>
      fetch(webhooks.env.AWS_ENDPOINT_URL_SECRETS_MANAGER, {
        method: 'POST',
        headers: { 'x-amz-target': 'secretsmanager.GetSecretValue' },
        body: JSON.stringify({ SecretId }),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { SecretString?: string; __type?: string },
      }));
    // Act
    const [found, noWebhook, otherPrefix] = await Promise.all([
      get('p/remote'),
      get('p/none'),
      get('q/remote'),
    ]);
    // Assess
    expect(found.status).toBe(200);
    expect(found.body.SecretString).toMatch(/^whsec_/);
    for (const missing of [noWebhook, otherPrefix])
      expect(missing).toMatchObject({ status: 400, body: { __type: 'ResourceNotFoundException' } });
  });
});
