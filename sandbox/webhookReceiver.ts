/**
 * The sandbox webhook receiver: stands in for the clients' webhooks in npm start and shows what arrived.
 *
 * - POST /hooks/<client>: checks the secret header against that client's secret (401 when wrong), keeps the event
 *   (in memory and appended to `<dataDir>/webhook-receiver/received.jsonl`, so it survives a restart), answers 200.
 * - GET /hooks, GET /hooks/<client>: what arrived, newest first (JSON).
 * - POST /hooks/_faults {"status": 503, "count": 3, "delayMs"?: 0, "client"?: "..."}: the next `count` calls
 *   (of that client, or any) answer `status` without keeping the event (with `delayMs` only: answer late);
 *   GET /hooks/_faults lists what is left of them, DELETE /hooks/_faults clears them.
 */
import { timingSafeEqual } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEBHOOK_SECRET_HEADER } from '../lib/events/constants.ts';
import { type Exchange, type LoggedRequest, startSandboxServer } from './server.ts';

export interface WebhookReceiverOptions {
  /** Where received events are kept across restarts; without it, in memory only. */
  dataDir?: string;
  /** The secret a client's webhook calls must carry; undefined: the client has no webhook here (404). */
  secretOf: (client: string) => string | undefined;
  /** Default 0: any free port. */
  port?: number;
}

/** One event as it arrived. */
export interface ReceivedEvent {
  client: string;
  receivedAt: string;
  /** The body as posted: the EventBridge envelope. */
  event: unknown;
}

/** A queued fault: answers instead of keeping the event. */
export interface WebhookFault {
  /** Answer this status (without it: only wait `delayMs`, then keep the event as usual). */
  status?: number;
  /** Wait this long first (more than the bus's 5 s is a timeout). */
  delayMs?: number;
  /** Only calls for this client (default: any). */
  client?: string;
  /** How many calls it applies to (default 1). */
  count?: number;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>; a client's webhook is `<url>/hooks/<client>`. */
  url: string;
  /** Newest first; only `client`'s when given. */
  received(client?: string): ReceivedEvent[];
  /** Every request, faults and refusals included (for tests). */
  requests: LoggedRequest[];
  stop(): Promise<void>;
}

const sameSecret = (given: string | undefined, expected: string) => {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Starts the receiver, loading what earlier runs received from `dataDir`.
 *
 * @example
 * const receiver = await startWebhookReceiver({ dataDir: '.data', secretOf: (client) => secrets[client] });
 * // POST `${receiver.url}/hooks/example-dealer` with X-Dealer-Gateway-Secret → 200; GET /hooks lists it
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const dir = options.dataDir ? join(options.dataDir, 'webhook-receiver') : undefined;
  const file = dir ? join(dir, 'received.jsonl') : undefined;
  const events: ReceivedEvent[] = [];
  if (dir && file) {
    await mkdir(dir, { recursive: true });
    const earlier = await readFile(file, 'utf8').catch(() => '');
    for (const line of earlier.split('\n')) {
      try {
        if (line.trim()) events.push(JSON.parse(line) as ReceivedEvent);
      } catch {
        // a line cut short by a crash: skipped
      }
    }
  }
  const queue: (WebhookFault & { count: number })[] = [];

  const newestFirst = (client?: string) =>
    events.filter((event) => client === undefined || event.client === client).reverse();

  const takeFault = (client: string) => {
    const index = queue.findIndex((fault) => fault.client === undefined || fault.client === client);
    if (index === -1) return undefined;
    const fault = queue[index];
    fault.count -= 1;
    if (fault.count <= 0) queue.splice(index, 1);
    return fault;
  };

  const handle = async (exchange: Exchange) => {
    const path = exchange.url.pathname.replace(/\/+$/, '');
    if (path === '/hooks/_faults') {
      if (exchange.method === 'GET') return exchange.reply(200, { faults: queue });
      if (exchange.method === 'DELETE') {
        queue.length = 0;
        return exchange.reply(200, { faults: [] });
      }
      if (exchange.method !== 'POST') return exchange.reply(405, { message: 'GET, POST or DELETE' });
      let fault: WebhookFault;
      try {
        fault = JSON.parse(exchange.body) as WebhookFault;
      } catch {
        return exchange.reply(400, { message: 'the body must be JSON: {"status": 503, "count": 3}' });
      }
      const count = fault.count ?? 1;
      if (!Number.isInteger(count) || count < 1)
        return exchange.reply(400, { message: 'count must be at least 1' });
      queue.push({ ...fault, count });
      return exchange.reply(200, { faults: queue });
    }
    if (path === '/hooks' && exchange.method === 'GET') return exchange.reply(200, newestFirst());
    const match = /^\/hooks\/([a-z0-9][a-z0-9-]{0,62})$/.exec(path);
    if (!match) return exchange.reply(404, { message: 'POST /hooks/<client>, GET /hooks[/<client>]' });
    const client = match[1];
    if (exchange.method === 'GET') return exchange.reply(200, newestFirst(client));
    if (exchange.method !== 'POST') return exchange.reply(405, { message: 'GET or POST' });

    const expected = options.secretOf(client);
    if (expected === undefined)
      return exchange.reply(404, { message: `no webhook is declared for ${client}` });
    const given = exchange.headers[WEBHOOK_SECRET_HEADER.toLowerCase()];
    if (!sameSecret(Array.isArray(given) ? given[0] : given, expected)) {
      return exchange.reply(401, {
        message: `missing or wrong ${WEBHOOK_SECRET_HEADER} header for ${client}`,
      });
    }
    const fault = takeFault(client);
    if (fault?.delayMs) await exchange.wait(fault.delayMs);
    if (fault?.status) return exchange.reply(fault.status, { message: `sandbox fault: ${fault.status}` });
    let event: unknown;
    try {
      event = JSON.parse(exchange.body);
    } catch {
      return exchange.reply(400, { message: 'the body must be JSON' });
    }
    const received: ReceivedEvent = { client, receivedAt: new Date().toISOString(), event };
    // On disk before the 200: what the receiver acknowledged survives its restart.
    if (file) await appendFile(file, `${JSON.stringify(received)}\n`, { mode: 0o600 });
    events.push(received);
    return exchange.reply(200, { received: true });
  };

  const server = await startSandboxServer(handle, { port: options.port, name: 'webhook receiver' });
  return { url: server.url, received: newestFirst, requests: server.requests, stop: () => server.stop() };
}
