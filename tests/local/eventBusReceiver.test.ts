import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Client } from '../../lib/clients/types.ts';
import { WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../sandbox/webhookReceiver.ts';
import { describeWebhookRoutes, localWebhookRoutes } from '../../scripts/local/webhookRoutes.ts';
import { ensureWebhookSecrets } from '../../scripts/local/webhookSecrets.ts';
import { startLocalWebhooks } from '../../scripts/local/webhooks.ts';

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

const secrets: Record<string, string> = { a: 'secret-a', b: 'secret-b' };
const startReceiver = async (dir?: string) => {
  const receiver = await startWebhookReceiver({ dataDir: dir, secretOf: (client) => secrets[client] });
  cleanups.push(() => receiver.stop());
  return receiver;
};
const post = (receiver: WebhookReceiver, client: string, body: unknown, secret = secrets[client]) =>
  fetch(`${receiver.url}/hooks/${client}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret ? { [WEBHOOK_SECRET_HEADER]: secret } : {}) },
    body: JSON.stringify(body),
  });
const get = async <T = unknown>(receiver: WebhookReceiver, path: string) =>
  (await (await fetch(`${receiver.url}${path}`)).json()) as T;

describe('the sandbox webhook receiver', () => {
  it('keeps events carrying the right secret and lists them newest first, per client', async () => {
    // Prepare
    const receiver = await startReceiver();
    // Act
    const first = await post(receiver, 'a', { id: '1' });
    const second = await post(receiver, 'b', { id: '2' });
    const third = await post(receiver, 'a', { id: '3' });
    // Assess
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    expect(await get(receiver, '/hooks')).toEqual([
      { client: 'a', receivedAt: expect.any(String), event: { id: '3' } },
      { client: 'b', receivedAt: expect.any(String), event: { id: '2' } },
      { client: 'a', receivedAt: expect.any(String), event: { id: '1' } },
    ]);
    expect((await get<{ event: { id: string } }[]>(receiver, '/hooks/a')).map((r) => r.event.id)).toEqual([
      '3',
      '1',
    ]);
  });

  it('answers 401 to a missing or wrong secret (another client’s too) and 404 to a client without a webhook', async () => {
    // Prepare
    const receiver = await startReceiver();
    // Act
    const missing = await post(receiver, 'a', { id: '1' }, '');
    const wrong = await post(receiver, 'a', { id: '1' }, secrets.b);
    const unknown = await post(receiver, 'c', { id: '1' }, 'x');
    // Assess
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      message: `missing or wrong ${WEBHOOK_SECRET_HEADER} header for a`,
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(404);
    expect(await get(receiver, '/hooks')).toEqual([]);
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
      { client: 'a', receivedAt: expect.any(String), event: { id: 'kept' } },
    ]);
  });
});

describe('where npm start sends each webhook', () => {
  const clients: Client[] = [
    {
      name: 'remote',
      dealers: [],
      webhook: { url: 'https://dealer.example.com/events', secretName: 's/remote' },
    },
    {
      name: 'local',
      dealers: [],
      webhook: { url: 'http://localhost:4010/events', secretName: 's/local', rateLimitPerSecond: 3 },
    },
    { name: 'none', dealers: [] },
  ];
  const values = { 's/remote': 'r', 's/local': 'l' };

  it('calls localhost webhooks as declared and sends the others to the sandbox receiver', () => {
    // Act
    const routes = localWebhookRoutes({ clients, secrets: values, receiverUrl: 'http://127.0.0.1:9' });
    // Assess
    expect(Object.fromEntries(routes)).toEqual({
      remote: {
        client: 'remote',
        declaredUrl: 'https://dealer.example.com/events',
        via: 'receiver',
        url: 'http://127.0.0.1:9/hooks/remote',
        secret: 'r',
        rateLimitPerSecond: 10,
      },
      local: {
        client: 'local',
        declaredUrl: 'http://localhost:4010/events',
        via: 'declared',
        url: 'http://localhost:4010/events',
        secret: 'l',
        rateLimitPerSecond: 3,
      },
    });
    expect(describeWebhookRoutes(routes)).toBe(
      'webhooks: remote → http://127.0.0.1:9/hooks/remote (sandbox receiver for https://dealer.example.com/events; LOCAL_WEBHOOKS=direct calls it); local → http://localhost:4010/events',
    );
  });

  it('calls every webhook as declared with LOCAL_WEBHOOKS=direct', () => {
    const routes = localWebhookRoutes({ clients, secrets: values, receiverUrl: 'http://x', direct: true });
    expect(routes.get('remote')?.url).toBe('https://dealer.example.com/events');
  });

  it('makes a local secret per secret name once, and keeps it across starts', async () => {
    // Prepare
    const dir = await dataDir();
    // Act
    const first = ensureWebhookSecrets(dir, ['s/remote', 's/local']);
    const again = ensureWebhookSecrets(dir, ['s/remote', 's/local', 's/new']);
    // Assess
    expect(first.created).toEqual(['s/remote', 's/local']);
    expect(again.created).toEqual(['s/new']);
    expect(again.secrets['s/remote']).toBe(first.secrets['s/remote']);
    expect(first.secrets['s/remote']).toMatch(/^whsec-[\w-]{32}$/);
  });

  it('npm start’s wiring: the bus delivers a remote webhook’s events to the receiver with the secret it checks', async () => {
    // Prepare
    const dir = await dataDir();
    const webhooks = await startLocalWebhooks({ dataDir: dir, clients, busNames: ['bus'], direct: false });
    cleanups.push(() => webhooks.stop());
    // Act
    const answer = await fetch(webhooks.bus.url, {
      method: 'POST',
      headers: { 'x-amz-target': 'AWSEvents.PutEvents', 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify({
        Entries: [
          {
            EventBusName: 'bus',
            Source: 'dealer-gateway',
            DetailType: 'Record state changed',
            Detail: JSON.stringify({ client: 'remote', recordId: 'r1', state: 'delivered' }),
          },
        ],
      }),
    });
    const deadline = Date.now() + 5000;
    while (webhooks.receiver.received('remote').length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // Assess
    expect(answer.status).toBe(200);
    expect(webhooks.receiver.received('remote')).toEqual([
      {
        client: 'remote',
        receivedAt: expect.any(String),
        event: expect.objectContaining({ detail: { client: 'remote', recordId: 'r1', state: 'delivered' } }),
      },
    ]);
    expect(webhooks.env).toEqual({
      AWS_ENDPOINT_URL_EVENTBRIDGE: webhooks.bus.url,
      LOCAL_WEBHOOK_RECEIVER_URL: webhooks.receiver.url,
    });
  });
});
