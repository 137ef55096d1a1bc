import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptWebhook } from '../../lib/webhooks/attempt.ts';
import { createRateLimiter } from '../../lib/webhooks/rateLimit.ts';
import { newWebhookSecret } from '../../lib/webhooks/secrets.ts';
import { signWebhook } from '../../lib/webhooks/signing.ts';

/** A real receiver: `/status/<n>` answers n, `/hang` never answers. */
const hanging: ServerResponse[] = [];
const server = createServer((req, res) => {
  req.resume();
  if (req.url === '/hang') return void hanging.push(res);
  res.writeHead(Number(req.url?.split('/')[2] ?? 200)).end();
});
let base: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const body = '{"type":"record.delivered"}';
const headers = signWebhook({ id: 'e1', body, secrets: [newWebhookSecret()], at: new Date() });

describe('one try of a webhook', () => {
  it.each([
    [200, { kind: 'delivered', status: 200 }],
    [204, { kind: 'delivered', status: 204 }],
    [410, { kind: 'gone', status: 410 }],
    [400, { kind: 'retry', status: 400, error: 'HTTP 400' }],
    [503, { kind: 'retry', status: 503, error: 'HTTP 503' }],
    [301, { kind: 'retry', status: 301, error: 'HTTP 301' }],
  ])('classifies %i', async (status, expected) => {
    // Act
    const outcome = await attemptWebhook({ url: `${base}/status/${status}`, body, headers });
    // Assess
    expect(outcome).toEqual(expected);
  });

  it('retries after a timeout (marked as one) and a refused connection', async () => {
    // Act
    const timedOut = await attemptWebhook({ url: `${base}/hang`, body, headers, timeoutMs: 200 });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await attemptWebhook({ url: `http://127.0.0.1:${port}/x`, body, headers });
    // Assess
    expect(timedOut).toEqual({ kind: 'retry', error: 'TimeoutError', timedOut: true });
    expect(refused).toMatchObject({ kind: 'retry', error: expect.stringContaining('ECONNREFUSED') });
    expect(refused).not.toHaveProperty('timedOut');
  });
});

describe("a client's rate limit", () => {
  it("spreads one client's calls at its rate and keeps clients apart", () => {
    // Prepare: a clock standing still.
    const limiter = createRateLimiter(() => 1000);
    // Act
    const a = [1, 2, 3].map(() => limiter.slotFor('a', 10));
    const b = limiter.slotFor('b', 10);
    // Assess
    expect(a).toEqual([1000, 1100, 1200]);
    expect(b).toBe(1000);
  });
});
