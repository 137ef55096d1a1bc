import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import { webhookEventOf } from '../../lib/events/webhookEvent.ts';
import { newWebhookSecret, type WebhookSecrets } from '../../lib/webhooks/secrets.ts';
import { type LocalEventBus, startLocalEventBus } from '../../local/eventBus.ts';
import type { WebhookRoute } from '../../local/webhookDispatcher.ts';
import { fileWebhookSwitch } from '../../local/webhookFlags.ts';
import type { WebhookRetrySettings } from '../../local/webhookRetry.ts';
import { readBody } from '../../testkit/readBody.ts';

const BUS = 'dealer-gateway-local';
/** Short enough that retry paths run in well under a second. */
const fast: WebhookRetrySettings = {
  baseMs: 40,
  capMs: 200,
  spanMs: 60_000,
  timeoutMs: 400,
};

const dirs: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-bus-'));
  dirs.push(dir);
  return dir;
};

interface Call {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}
/** A real webhook: records each call, answers what `respond` says (a number: that status; 'hang': nothing). */
const startHook = async (respond: (call: Call, index: number) => number | 'hang' = () => 200) => {
  const calls: Call[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    const raw = (await readBody(req)).toString();
    const call = { at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw) };
    const answer = respond(call, calls.length);
    calls.push(call);
    if (answer === 'hang') hanging.push(res);
    else res.writeHead(answer, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  cleanups.push(stop);
  return { url, calls, stop };
};

const route = (url: string, extra: Partial<WebhookRoute> = {}): WebhookRoute => ({
  url,
  rateLimitPerSecond: 100,
  ...extra,
});

/** Each client's secrets (a new one per client, made on first use; a test may set a rotation). */
const secrets = new Map<string, WebhookSecrets>();
const secretsOf = (client: string): WebhookSecrets => {
  const known = secrets.get(client) ?? { current: newWebhookSecret() };
  secrets.set(client, known);
  return known;
};

/** Verifies a call as the client would, with the official library: the parsed body, or throws. */
const verified = (call: Call, secret = secretsOf('a').current) =>
  new Webhook(secret).verify(call.raw, call.headers as Record<string, string>);

const startBus = async (
  dir: string,
  routes: Record<string, WebhookRoute>,
  settings: Partial<WebhookRetrySettings> = {},
) => {
  const logs: Record<string, unknown>[] = [];
  const bus = await startLocalEventBus({
    dataDir: dir,
    busNames: [BUS],
    routeOf: (client) => routes[client],
    secretsOf,
    settings: { ...fast, ...settings },
    log: (entry) => logs.push(entry),
  });
  cleanups.push(() => bus.stop());
  return { bus, logs };
};

const detailOf = (client: string, recordId = `rec-${client}`): RecordStateChanged => ({
  eventId: `${recordId}:2026-11-23T00:00:00.000Z`,
  recordId,
  kind: 'salesRegistration',
  client,
  state: 'rejected',
  previousState: 'accepted',
  attempts: 1,
  sequence: 2,
  at: '2026-11-23T00:00:00.000Z',
  acceptedAt: '2026-11-22T23:59:59.000Z',
  error: 'FrameNum already registered',
});

const entry = (client: string, overrides: Record<string, unknown> = {}) => ({
  Source: EVENT_SOURCE,
  DetailType: RECORD_STATE_CHANGED,
  Detail: JSON.stringify(detailOf(client)),
  EventBusName: BUS,
  ...overrides,
});

/** PutEvents as the JSON 1.1 protocol sends it. */
const putEvents = async (bus: LocalEventBus, entries: unknown[]) => {
  const response = await fetch(bus.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
    body: JSON.stringify({ Entries: entries }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const until = async (condition: () => boolean | Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
};

const files = async (dir: string) =>
  existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.json')) : [];

describe('the local event bus (PutEvents → webhooks)', () => {
  it("posts the event in the Standard Webhooks shape, signed with the client's secret, no secret in a header", async () => {
    // Prepare
    const hook = await startHook();
    const { bus } = await startBus(await dataDir(), { a: route(hook.url) });
    // Act
    const answer = await putEvents(bus, [entry('a', { Time: 1795000000 })]);
    await until(() => hook.calls.length === 1);
    // Assess
    expect(answer).toEqual({
      status: 200,
      body: { FailedEntryCount: 0, Entries: [{ EventId: expect.stringMatching(/^[0-9a-f-]{36}$/) }] },
    });
    const [call] = hook.calls;
    expect(verified(call)).toEqual(webhookEventOf(detailOf('a')));
    expect(call.raw).toBe(JSON.stringify(webhookEventOf(detailOf('a'))));
    expect(call.headers['webhook-id']).toBe(detailOf('a').eventId);
    expect(Number(call.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
    expect(call.headers['content-type']).toMatch(/^application\/json/);
    // Negative control: another client's secret does not verify, and no header carries a secret.
    expect(() => verified(call, secretsOf('b').current)).toThrow('No matching signature found');
    const secretBody = secretsOf('a').current.slice('whsec_'.length);
    expect(JSON.stringify(call.headers)).not.toContain(secretBody);
    expect(call.headers['x-dealer-gateway-secret']).toBeUndefined();
    await until(async () => (await files(bus.store.pendingDir)).length === 0);
  });

  it('signs with both secrets during a rotation, and with the new one alone after the window', async () => {
    // Prepare: client r rotated 23 h ago, client s 25 h ago (window: 24 h).
    const hook = await startHook();
    const old = newWebhookSecret();
    const rotated = (hoursAgo: number): WebhookSecrets => ({
      current: newWebhookSecret(),
      previous: old,
      rotatedAt: new Date(Date.now() - hoursAgo * 3_600_000),
    });
    secrets.set('r', rotated(23));
    secrets.set('s', rotated(25));
    const { bus } = await startBus(await dataDir(), { r: route(`${hook.url}/r`), s: route(`${hook.url}/s`) });
    // Act
    await putEvents(bus, [entry('r')]);
    await until(() => hook.calls.length === 1);
    await putEvents(bus, [entry('s')]);
    await until(() => hook.calls.length === 2);
    // Assess
    const [during, after] = hook.calls;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(during, secrets.get('r')?.current)).toBeTruthy();
    expect(verified(during, old)).toBeTruthy();
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verified(after, secrets.get('s')?.current)).toBeTruthy();
    expect(() => verified(after, old)).toThrow('No matching signature found');
  });

  it('answers the AWS SDK, failing per entry another bus, bad Detail or missing fields', async () => {
    // Prepare
    const hook = await startHook();
    const { bus } = await startBus(await dataDir(), { a: route(hook.url) });
    const client = new EventBridgeClient({
      endpoint: bus.url,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    cleanups.push(async () => client.destroy());
    // Act
    const result = await client.send(
      new PutEventsCommand({
        Entries: [
          entry('a'),
          entry('a', { EventBusName: 'someone-elses-bus' }),
          entry('a', { EventBusName: `arn:aws:events:eu-west-1:000000000000:event-bus/${BUS}` }),
          entry('a', { Detail: '{not json' }),
          entry('a', { EventBusName: undefined }),
          { EventBusName: BUS, Detail: '{}' },
        ],
      }),
    );
    await until(() => hook.calls.length === 2);
    // Assess
    expect(result.FailedEntryCount).toBe(4);
    expect(result.Entries).toEqual([
      { EventId: expect.any(String) },
      { ErrorCode: 'InvalidArgument', ErrorMessage: 'Event bus someone-elses-bus does not exist.' },
      { EventId: expect.any(String) },
      { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' },
      { ErrorCode: 'InvalidArgument', ErrorMessage: 'Event bus default does not exist.' },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: expect.stringContaining('Source, DetailType and Detail'),
      },
    ]);
    const tooMany = await putEvents(
      bus,
      Array.from({ length: 11 }, () => entry('a')),
    );
    expect(tooMany).toMatchObject({ status: 400, body: { __type: 'ValidationException' } });
  });

  it("keeps clients apart: A's events reach only A's webhook, a client without one gets none", async () => {
    // Prepare
    const hookA = await startHook();
    const hookB = await startHook();
    const dir = await dataDir();
    const { bus } = await startBus(dir, { a: route(hookA.url), b: route(hookB.url) });
    // Act
    const answer = await putEvents(bus, [entry('a'), entry('b'), entry('c'), entry('a'), entry('nobody')]);
    await until(() => hookA.calls.length === 2 && hookB.calls.length === 1);
    await sleep(100);
    // Assess
    expect(answer.body.FailedEntryCount).toBe(0);
    const recordsOf = (calls: Call[]) =>
      calls.map((call) => (call.body.data as { recordId: string }).recordId);
    expect(recordsOf(hookA.calls)).toEqual(['rec-a', 'rec-a']);
    expect(recordsOf(hookB.calls)).toEqual(['rec-b']);
    expect(verified(hookB.calls[0], secretsOf('b').current)).toBeTruthy();
    // c and nobody: no rule matched, nothing kept.
    expect(await files(bus.store.pendingDir)).toEqual([]);
    expect(await files(bus.store.deadDir)).toEqual([]);
  });

  it('retries 503s, 400s and timeouts in growing windows until the webhook answers 2xx', async () => {
    // Prepare: 503, 400, no answer (timeout), 429, then 200.
    const script = [503, 400, 'hang', 429] as const;
    const hook = await startHook((_call, index) => script[index] ?? 200);
    const { bus, logs } = await startBus(await dataDir(), { a: route(hook.url) });
    // Act
    const putAt = Date.now();
    await putEvents(bus, [entry('a')]);
    await until(() => hook.calls.length === 5);
    await until(async () => (await files(bus.store.pendingDir)).length === 0);
    // Assess
    // Retry k falls in its window: windows of 40, 80, 160, 200 ms start at 0, 40, 120, 280 ms. Measured from the
    // put, which comes before the first try, so a busy machine's delays can only make a try later, never earlier.
    const sinceFirst = hook.calls.map((call) => call.at - hook.calls[0].at);
    const sincePut = hook.calls.map((call) => call.at - putAt);
    expect(sincePut[2]).toBeGreaterThanOrEqual(40);
    expect(sincePut[3]).toBeGreaterThanOrEqual(120);
    expect(sincePut[4]).toBeGreaterThanOrEqual(280);
    expect(hook.calls[4].at - hook.calls[3].at).toBeGreaterThanOrEqual(0);
    expect(sinceFirst[3] - sinceFirst[2]).toBeGreaterThanOrEqual(0);
    // The hung try waited for its timeout before the next.
    expect(hook.calls[3].at - hook.calls[2].at).toBeGreaterThanOrEqual(fast.timeoutMs - 5);
    // The same webhook-id on every try, each verifiable.
    expect(new Set(hook.calls.map((call) => call.headers['webhook-id'])).size).toBe(1);
    for (const call of hook.calls) expect(verified(call)).toBeTruthy();
    expect(logs.filter((log) => log.message === 'webhook attempt failed: retrying')).toHaveLength(4);
    expect(logs.at(-1)).toMatchObject({
      message: 'webhook delivered',
      client: 'a',
      attempts: 5,
      status: 200,
    });
    // Logs carry ids and statuses, never the event's detail.
    expect(JSON.stringify(logs)).not.toContain('FrameNum already registered');
  });

  it("disables a client's webhook on 410 Gone: no retry, its later events dropped, until enabled again", async () => {
    // Prepare
    let gone = true;
    const hook = await startHook(() => (gone ? 410 : 200));
    const dir = await dataDir();
    const { bus, logs } = await startBus(dir, { a: route(hook.url) });
    const flags = fileWebhookSwitch(dir);
    // Act
    await putEvents(bus, [entry('a')]);
    await until(async () => (await flags.disabled('a')) !== undefined);
    await until(async () => (await files(bus.store.pendingDir)).length === 0);
    await putEvents(bus, [entry('a')]);
    await until(() => logs.filter((log) => String(log.message).includes('is disabled')).length === 1);
    const callsWhileDisabled = hook.calls.length;
    gone = false;
    const wasDisabled = await flags.enable('a');
    await putEvents(bus, [entry('a')]);
    await until(() => hook.calls.length === callsWhileDisabled + 1);
    await until(() => logs.some((log) => log.message === 'webhook delivered'));
    // Assess
    expect(callsWhileDisabled).toBe(1);
    expect(wasDisabled).toBe(true);
    expect(await flags.disabled('a')).toBeUndefined();
    expect(await files(bus.store.deadDir)).toEqual([]);
    expect(logs.find((log) => log.status === 410)).toMatchObject({
      level: 'ERROR',
      client: 'a',
      attempts: 1,
    });
  });

  it('gives up once the retry schedule is used up, into the dead directory', async () => {
    // Prepare
    const hook = await startHook(() => 503);
    const { bus, logs } = await startBus(await dataDir(), { a: route(hook.url) }, { spanMs: 300 });
    // Act
    await putEvents(bus, [entry('a')]);
    await until(() => logs.some((log) => log.level === 'ERROR'));
    // Assess
    expect(hook.calls.length).toBeGreaterThan(1);
    expect(await files(bus.store.deadDir)).toHaveLength(1);
    expect(await files(bus.store.pendingDir)).toEqual([]);
    expect(logs.at(-1)).toMatchObject({
      level: 'ERROR',
      reason: 'retry schedule used up',
      lastError: 'HTTP 503',
    });
  });

  it('loses nothing across a restart: a delivery failing when the bus stops is made by the next bus', async () => {
    // Prepare: the webhook is down (503) while the first bus runs.
    let up = false;
    const hook = await startHook(() => (up ? 200 : 503));
    const dir = await dataDir();
    const first = await startBus(dir, { a: route(hook.url) });
    const answer = await putEvents(first.bus, [entry('a'), entry('a')]);
    const ids = (answer.body.Entries as { EventId: string }[]).map((result) => result.EventId);
    // On disk before PutEvents answered.
    expect((await files(first.bus.store.pendingDir)).sort()).toEqual(ids.map((id) => `${id}.json`).sort());
    await until(() => hook.calls.length >= 2);
    // Act
    await first.bus.stop();
    up = true;
    const callsBefore = hook.calls.length;
    const second = await startBus(dir, { a: route(hook.url) });
    // (Its log line follows the file's removal: wait for both, or a loaded machine sees the one without the other.)
    const deliveredLogs = () => second.logs.filter((log) => log.message === 'webhook delivered');
    await until(async () => (await files(second.bus.store.pendingDir)).length === 0);
    await until(() => deliveredLogs().length === 2);
    // Assess: every event arrived (at least once) after the restart.
    expect(second.bus.resumed).toBe(2);
    const delivered = hook.calls.slice(callsBefore);
    expect(delivered.length).toBeGreaterThanOrEqual(2);
    for (const call of delivered) expect(verified(call)).toBeTruthy();
    expect(deliveredLogs()).toHaveLength(2);
  });

  it("never lets a hung webhook delay another client's deliveries", async () => {
    // Prepare: A's webhook never answers (each attempt waits for the timeout); B's answers at once.
    const hookA = await startHook(() => 'hang');
    const hookB = await startHook();
    const { bus } = await startBus(
      await dataDir(),
      { a: route(hookA.url), b: route(hookB.url) },
      { timeoutMs: 3000 },
    );
    await putEvents(
      bus,
      Array.from({ length: 10 }, () => entry('a')),
    );
    await until(() => hookA.calls.length >= 5);
    // Act
    const started = Date.now();
    await putEvents(bus, [entry('b')]);
    await until(() => hookB.calls.length === 1);
    // Assess: B's event did not wait for A's attempts to time out (3 s), however loaded the machine.
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("spreads a client's calls to its rate limit", async () => {
    // Prepare
    const hook = await startHook();
    const { bus } = await startBus(await dataDir(), { a: route(hook.url, { rateLimitPerSecond: 10 }) });
    // Act
    await putEvents(
      bus,
      Array.from({ length: 6 }, () => entry('a')),
    );
    await until(() => hook.calls.length === 6);
    // Assess: six calls at 10 a second take at least half a second.
    expect(hook.calls[5].at - hook.calls[0].at).toBeGreaterThanOrEqual(450);
  });
});
