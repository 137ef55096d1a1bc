import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, RECORD_STATE_CHANGED, WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { type LocalEventBus, startLocalEventBus } from '../../scripts/local/eventBus.ts';
import type { WebhookRoute } from '../../scripts/local/webhookDispatcher.ts';
import type { WebhookRetrySettings } from '../../scripts/local/webhookRetry.ts';
import { readBody } from '../support/readBody.ts';

const BUS = 'dealer-gateway-local';
/** Short enough that retry paths run in well under a second. */
const fast: WebhookRetrySettings = {
  baseMs: 40,
  capMs: 200,
  maxAgeMs: 60_000,
  maxAttempts: 185,
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
  body: Record<string, unknown>;
}
/** A real webhook: records each call, answers what `respond` says (a number: that status; 'hang': nothing). */
const startHook = async (respond: (call: Call, index: number) => number | 'hang' = () => 200) => {
  const calls: Call[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    const call = { at: Date.now(), headers: req.headers, body: JSON.parse((await readBody(req)).toString()) };
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
  secret: `secret-of-${url}`,
  rateLimitPerSecond: 100,
  ...extra,
});

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
    settings: { ...fast, ...settings },
    log: (entry) => logs.push(entry),
  });
  cleanups.push(() => bus.stop());
  return { bus, logs };
};

const detailOf = (client: string, recordId = `rec-${client}`) => ({
  eventId: `${recordId}:2026-11-23T00:00:00.000Z`,
  recordId,
  kind: 'salesRegistration',
  client,
  state: 'rejected',
  previousState: 'accepted',
  attempts: 1,
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
  it('posts the EventBridge envelope with the secret header to the client webhook', async () => {
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
    expect(call.headers[WEBHOOK_SECRET_HEADER.toLowerCase()]).toBe(`secret-of-${hook.url}`);
    expect(call.headers['content-type']).toMatch(/^application\/json/);
    expect(call.body).toEqual({
      version: '0',
      id: (answer.body.Entries as { EventId: string }[])[0].EventId,
      'detail-type': RECORD_STATE_CHANGED,
      source: EVENT_SOURCE,
      account: '000000000000',
      time: '2026-11-18T11:06:40Z', // Time in epoch seconds, as the SDK sends it
      region: 'eu-west-1',
      resources: [],
      detail: detailOf('a'),
    });
    await until(async () => (await files(bus.store.pendingDir)).length === 0);
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
    expect(hookA.calls.map((call) => (call.body.detail as { client: string }).client)).toEqual(['a', 'a']);
    expect(hookB.calls.map((call) => (call.body.detail as { client: string }).client)).toEqual(['b']);
    expect(hookB.calls[0].headers[WEBHOOK_SECRET_HEADER.toLowerCase()]).toBe(`secret-of-${hookB.url}`);
    // c and nobody: no rule matched, nothing kept.
    expect(await files(bus.store.pendingDir)).toEqual([]);
    expect(await files(bus.store.deadDir)).toEqual([]);
  });

  it('retries 503s and timeouts with growing delays until the webhook answers 2xx', async () => {
    // Prepare: 503, 503, no answer (timeout), 429, then 200.
    const script = [503, 503, 'hang', 429] as const;
    const hook = await startHook((_call, index) => script[index] ?? 200);
    const { bus, logs } = await startBus(await dataDir(), { a: route(hook.url) });
    // Act
    await putEvents(bus, [entry('a')]);
    await until(() => hook.calls.length === 5);
    await until(async () => (await files(bus.store.pendingDir)).length === 0);
    // Assess
    const gaps = hook.calls.slice(1).map((call, i) => call.at - hook.calls[i].at);
    // Half fixed, half random, doubling from 40 ms up to the 200 ms cap: 20..40, 40..80, 80..160, 100..200 ms.
    expect(gaps[0]).toBeGreaterThanOrEqual(20 - 5);
    expect(gaps[1]).toBeGreaterThanOrEqual(40 - 5);
    expect(gaps[2]).toBeGreaterThanOrEqual(fast.timeoutMs + 80 - 5); // the hung attempt waited for its timeout
    expect(gaps[3]).toBeGreaterThanOrEqual(100 - 5);
    expect(new Set(hook.calls.map((call) => call.body.id)).size).toBe(1);
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

  it('does not retry a 400: the delivery goes to the dead directory at once', async () => {
    // Prepare
    const hook = await startHook(() => 400);
    const { bus, logs } = await startBus(await dataDir(), { a: route(hook.url) });
    // Act
    const answer = await putEvents(bus, [entry('a')]);
    await until(() => logs.some((log) => log.level === 'ERROR'));
    await sleep(fast.capMs);
    // Assess
    expect(hook.calls).toHaveLength(1);
    expect(await files(bus.store.pendingDir)).toEqual([]);
    const [dead] = await bus.store.dead();
    expect(dead).toMatchObject({
      id: (answer.body.Entries as { EventId: string }[])[0].EventId,
      client: 'a',
      attempts: 1,
      lastError: 'HTTP 400',
    });
    expect(logs.at(-1)).toMatchObject({ level: 'ERROR', reason: 'not retryable', attempts: 1 });
  });

  it('gives up once the event is older than the maximum age, into the dead directory', async () => {
    // Prepare
    const hook = await startHook(() => 503);
    const { bus, logs } = await startBus(await dataDir(), { a: route(hook.url) }, { maxAgeMs: 300 });
    // Act
    await putEvents(bus, [entry('a')]);
    await until(() => logs.some((log) => log.level === 'ERROR'));
    // Assess
    expect(hook.calls.length).toBeGreaterThan(1);
    expect(await files(bus.store.deadDir)).toHaveLength(1);
    expect(await files(bus.store.pendingDir)).toEqual([]);
    expect(logs.at(-1)).toMatchObject({ level: 'ERROR', reason: 'maximum event age', lastError: 'HTTP 503' });
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
    const delivered = hook.calls.slice(callsBefore).map((call) => call.body.id);
    expect([...new Set(delivered)].sort()).toEqual([...ids].sort());
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
