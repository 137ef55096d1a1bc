import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import {
  DynamoDBClient as SdkDynamoDBClient,
  GetItemCommand as SdkGetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '../../lib/aws/jsonProtocol/dynamodb.ts';
import { AwsNetworkError } from '../../lib/aws/jsonProtocol/errors.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

/*
 * Deadlines of the JSON-protocol clients: each attempt's (attemptTimeoutMs, from the request's start to the whole
 * answer) and the caller's (`send(command, { abortSignal })`, as with the SDK). Against a local server that
 * counts requests and can hang, trickle an answer that never completes, or throttle, and against dynalite next
 * to the SDK itself, which is the reference for how an abort looks.
 */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

type Behaviour = 'hang' | 'trickle' | 'throttle';

interface Served {
  endpoint: string;
  /** Requests that reached the server (attempts made). */
  requests: number;
  /** Connections of those requests that the client has closed, and when (ms since the server started). */
  closedAt: number[];
  stop: () => Promise<void>;
}

/**
 * `hang`: reads the request, never answers. `trickle`: answers 200 and a JSON body of which one byte comes every
 * 50 ms for 6 s, so no attempt deadline under that can receive the whole of it, while an idle timeout (which each
 * byte restarts) never fires. `throttle`: answers ProvisionedThroughputExceededException (retried with backoff).
 */
const serve = async (behaviour: Behaviour): Promise<Served> => {
  const started = Date.now();
  const served: Served = { endpoint: '', requests: 0, closedAt: [], stop: async () => {} };
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    served.requests += 1;
    res.on('close', () => served.closedAt.push(Date.now() - started));
    req.resume();
    req.on('end', () => {
      if (behaviour === 'hang') return;
      if (behaviour === 'throttle') {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
            message: 'slow down',
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.write('{"Item":{}');
      let sent = 0;
      const timer = setInterval(() => {
        sent += 1;
        if (sent >= 120) {
          clearInterval(timer);
          res.end('}');
        } else res.write(' ');
      }, 50);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  served.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  served.stop = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return served;
};

let server: Served | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.stop();
  server = undefined;
});

const clientFor = (endpoint: string, config: { maxAttempts?: number; attemptTimeoutMs?: number } = {}) =>
  new DynamoDBClient({ endpoint, region: 'eu-west-1', credentials, ...config });

const getItem = () => new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } });

/** Settles a promise into its rejection reason and the milliseconds it took from `since`. */
const rejection = async (pending: Promise<unknown>, since: number) => {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error: error as Error & Record<string, unknown>, ms: performance.now() - since };
};

describe('the attempt deadline covers the whole answer', () => {
  it('ends an attempt whose answer trickles in and never completes within the deadline', async () => {
    // Prepare
    server = await serve('trickle');
    const client = clientFor(server.endpoint, { maxAttempts: 1, attemptTimeoutMs: 400 });
    // Act
    const started = performance.now();
    const { error, ms } = await rejection(client.send(getItem()), started);
    // Assess: at the deadline, not when the trickle ends (6 s) nor never (an idle timeout restarts per byte).
    expect(error).toBeInstanceOf(AwsNetworkError);
    expect(error.message).toContain('within 400 ms');
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(400 + 1_500);
    expect(server.requests).toBe(1);
    // The attempt was destroyed, not left to trickle on: the server sees its connection closed.
    await vi.waitFor(() => expect(server?.closedAt).toHaveLength(1), { timeout: 1_000 });
  });

  it('gives every attempt its own deadline and reports the last one after all attempts', async () => {
    // Prepare
    server = await serve('trickle');
    vi.spyOn(Math, 'random').mockReturnValue(0); // no backoff: the time is the attempts'
    const client = clientFor(server.endpoint, { maxAttempts: 3, attemptTimeoutMs: 300 });
    // Act
    const started = performance.now();
    const { error, ms } = await rejection(client.send(getItem()), started);
    // Assess
    expect(error).toBeInstanceOf(AwsNetworkError);
    expect(error).toMatchObject({ $metadata: { attempts: 3 } });
    expect(ms).toBeGreaterThanOrEqual(3 * 290);
    expect(ms).toBeLessThan(3 * 300 + 1_500);
    expect(server.requests).toBe(3);
  });
});

describe('send(command, { abortSignal }) ends the call', () => {
  it('destroys the attempt under way when the signal aborts, and retries nothing', async () => {
    // Prepare
    server = await serve('hang');
    const client = clientFor(server.endpoint, { maxAttempts: 5, attemptTimeoutMs: 10_000 });
    const controller = new AbortController();
    const pending = client.send(getItem(), { abortSignal: controller.signal });
    await vi.waitFor(() => expect(server?.requests).toBe(1), { timeout: 2_000 });
    // Act
    const abortedAt = performance.now();
    controller.abort();
    const { error, ms } = await rejection(pending, abortedAt);
    // Assess
    expect(error).toMatchObject({ name: 'AbortError', message: 'Request aborted' });
    expect(error).not.toBeInstanceOf(AwsNetworkError);
    expect(ms).toBeLessThan(250);
    await vi.waitFor(() => expect(server?.closedAt).toHaveLength(1), { timeout: 1_000 });
    await delay(300);
    expect(server.requests).toBe(1);
  });

  it('stops an answer that is streaming in when the signal aborts', async () => {
    // Prepare
    server = await serve('trickle');
    const client = clientFor(server.endpoint, { maxAttempts: 3, attemptTimeoutMs: 10_000 });
    const controller = new AbortController();
    const pending = client.send(getItem(), { abortSignal: controller.signal });
    await vi.waitFor(() => expect(server?.requests).toBe(1), { timeout: 2_000 });
    await delay(200); // the status and the first bytes are in
    // Act
    const abortedAt = performance.now();
    controller.abort();
    const { error, ms } = await rejection(pending, abortedAt);
    // Assess
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(ms).toBeLessThan(250);
    await vi.waitFor(() => expect(server?.closedAt).toHaveLength(1), { timeout: 1_000 });
    await delay(300);
    expect(server.requests).toBe(1);
  });

  it('cuts the backoff short when the signal aborts during it, and starts no further attempt', async () => {
    // Prepare: the longest throttling backoff after the first attempt (500 ms), so the abort lands inside it.
    server = await serve('throttle');
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const client = clientFor(server.endpoint, { maxAttempts: 5 });
    const controller = new AbortController();
    const pending = client.send(getItem(), { abortSignal: controller.signal });
    await vi.waitFor(() => expect(server?.closedAt).toHaveLength(1), { timeout: 2_000, interval: 5 });
    await delay(50);
    // Act
    const abortedAt = performance.now();
    controller.abort();
    const { error, ms } = await rejection(pending, abortedAt);
    // Assess
    expect(error).toMatchObject({ name: 'AbortError', message: 'Request aborted' });
    expect(ms).toBeLessThan(250);
    await delay(700); // past where the backoff would have ended
    expect(server.requests).toBe(1);
  });

  it('ends a call by a deadline of the caller (AbortSignal.timeout), retries included', async () => {
    // Prepare: every attempt would get 1 s and there are 5 of them; the caller allows 300 ms for all.
    server = await serve('hang');
    const client = clientFor(server.endpoint, { maxAttempts: 5, attemptTimeoutMs: 1_000 });
    // Act
    const started = performance.now();
    const { error, ms } = await rejection(
      client.send(getItem(), { abortSignal: AbortSignal.timeout(300) }),
      started,
    );
    // Assess
    expect(error).toMatchObject({ name: 'AbortError', message: 'Request aborted' });
    expect((error.cause as Error | undefined)?.name).toBe('TimeoutError');
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(300 + 700);
    await delay(300);
    expect(server.requests).toBe(1);
  });

  it('leaves no listener on a signal that outlives the call, after attempts and backoffs', async () => {
    // Prepare
    server = await serve('throttle');
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    const signal = new AbortController().signal;
    // Act
    const { error } = await rejection(client.send(getItem(), { abortSignal: signal }), performance.now());
    // Assess
    expect(error).toMatchObject({
      name: 'ProvisionedThroughputExceededException',
      $metadata: { attempts: 3 },
    });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('sends nothing when the signal has already aborted', async () => {
    // Prepare
    server = await serve('hang');
    const client = clientFor(server.endpoint);
    // Act
    const { error } = await rejection(
      client.send(getItem(), { abortSignal: AbortSignal.abort() }),
      performance.now(),
    );
    // Assess
    expect(error).toMatchObject({ name: 'AbortError', message: 'Request aborted' });
    await delay(100);
    expect(server.requests).toBe(0);
  });
});

describe('abortSignal against dynalite, next to the SDK', () => {
  let aws: Awaited<ReturnType<typeof isolatedAws>>;
  let table: string;
  beforeAll(async () => {
    aws = await isolatedAws();
    table = aws.resources.tables.RecordsTable.name;
  });

  const clients = () => ({
    ours: new DynamoDBClient({ endpoint: aws.dynamoEndpoint, region: 'eu-west-1', credentials }),
    sdk: new SdkDynamoDBClient({ endpoint: aws.dynamoEndpoint, region: 'eu-west-1', credentials }),
  });

  it('rejects an aborted call as the SDK does, and completes one whose signal never aborts', async () => {
    // Prepare
    const { ours, sdk } = clients();
    const pk = `abort-${Date.now()}`;
    await ours.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } }));
    const key = { TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true };
    const signal = new AbortController().signal;
    // Act
    const [ourAbort, sdkAbort] = await Promise.all([
      rejection(ours.send(new GetItemCommand(key), { abortSignal: AbortSignal.abort() }), 0),
      rejection(sdk.send(new SdkGetItemCommand(key), { abortSignal: AbortSignal.abort() }), 0),
    ]);
    const [ourItem, sdkItem] = await Promise.all([
      ours.send(new GetItemCommand(key), { abortSignal: signal }),
      sdk.send(new SdkGetItemCommand(key), { abortSignal: signal }),
    ]);
    // Assess
    expect(sdkAbort.error).toMatchObject({ name: 'AbortError', message: 'Request aborted' });
    expect(ourAbort.error).toMatchObject({ name: sdkAbort.error.name, message: sdkAbort.error.message });
    expect(ourItem.Item).toEqual(sdkItem.Item);
    // Neither client leaves a listener on a signal that outlives the call.
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    sdk.destroy();
  });
});
