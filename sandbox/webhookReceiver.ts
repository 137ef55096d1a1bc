/**
 * The sandbox webhook receiver: stands in for the clients' webhooks in npm start and shows what arrived.
 *
 * - POST /hooks/<client>: verifies the Standard Webhooks signature (webhook-id, webhook-timestamp,
 *   webhook-signature) with the official `standardwebhooks` library and that client's secret, as an integrator
 *   would; keeps the event with the result (`verified`; in memory and appended to
 *   `<dataDir>/webhook-receiver/received.jsonl`, so it survives a restart) and answers 200, or 401 when the
 *   signature is missing or does not verify (kept too, `verified: false`, so that what was refused shows).
 * - GET /hooks, GET /hooks/<client>: what arrived, newest first (JSON).
 * - POST /hooks/_faults {"status": 503, "count": 3, "delayMs"?: 0, "client"?: "..."}: the next `count` calls
 *   (of that client, or any) answer `status` without keeping the event (with `delayMs` only: answer late);
 *   GET /hooks/_faults lists what is left of them, DELETE /hooks/_faults clears them.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { type Exchange, type LoggedRequest, startSandboxServer } from './server.ts';

export interface WebhookReceiverOptions {
  /** Where received events are kept across restarts; without it, in memory only. */
  dataDir?: string;
  /** The secrets a client's webhook calls are verified with (any one); undefined: no webhook here (404). */
  secretsOf: (client: string) => readonly string[] | undefined;
  /** Default 0: any free port. */
  port?: number;
}

/** One event as it arrived. */
export interface ReceivedEvent {
  client: string;
  receivedAt: string;
  /** Whether the signature verified (the event was refused with 401 otherwise). */
  verified: boolean;
  /** The `webhook-id` header. */
  webhookId?: string;
  /** The `traceparent` header (W3C Trace Context): the trace of the record the event is about. */
  traceparent?: string;
  /** Why it did not verify (the library's message). */
  verificationError?: string;
  /** The body as posted (JSON), or its text when it is not JSON. */
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

/** The first header of a name. */
const headerOf = (headers: Record<string, string | string[] | undefined>, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Verifies a body with any of the secrets: undefined when one verifies, else the library's last complaint. */
const verificationError = (
  body: string,
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[],
): string | undefined => {
  const signed: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headerOf(headers, name);
    if (value !== undefined) signed[name] = value;
  }
  let complaint = 'no secret';
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(body, signed);
      return undefined;
    } catch (error) {
      complaint = error instanceof Error ? error.message : String(error);
    }
  }
  return complaint;
};

/**
 * Starts the receiver, loading what earlier runs received from `dataDir`.
 *
 * @example
 * const receiver = await startWebhookReceiver({ dataDir: '.data', secretsOf: (client) => [secrets[client]] });
 * // POST `${receiver.url}/hooks/example-dealer`, signed → 200 (verified: true); unsigned → 401; GET /hooks lists both
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

    const secrets = options.secretsOf(client);
    if (secrets === undefined)
      return exchange.reply(404, { message: `no webhook is declared for ${client}` });
    const problem = verificationError(exchange.body, exchange.headers, secrets);
    const keep = async (received: ReceivedEvent) => {
      // On disk before the answer: what the receiver acknowledged (or refused) survives its restart.
      if (file) await appendFile(file, `${JSON.stringify(received)}\n`, { mode: 0o600 });
      events.push(received);
    };
    const parsed = (() => {
      try {
        return JSON.parse(exchange.body) as unknown;
      } catch {
        return exchange.body;
      }
    })();
    const webhookId = headerOf(exchange.headers, 'webhook-id');
    const traceparent = headerOf(exchange.headers, 'traceparent');
    const base = {
      client,
      receivedAt: new Date().toISOString(),
      ...(webhookId ? { webhookId } : {}),
      ...(traceparent ? { traceparent } : {}),
    };
    if (problem !== undefined) {
      await keep({ ...base, verified: false, verificationError: problem, event: parsed });
      return exchange.reply(401, { message: `webhook signature not verified for ${client}: ${problem}` });
    }
    const fault = takeFault(client);
    if (fault?.delayMs) await exchange.wait(fault.delayMs);
    if (fault?.status) return exchange.reply(fault.status, { message: `sandbox fault: ${fault.status}` });
    if (typeof parsed === 'string') return exchange.reply(400, { message: 'the body must be JSON' });
    await keep({ ...base, verified: true, event: parsed });
    return exchange.reply(200, { received: true });
  };

  const server = await startSandboxServer(handle, { port: options.port, name: 'webhook receiver' });
  return { url: server.url, received: newestFirst, requests: server.requests, stop: () => server.stop() };
}
