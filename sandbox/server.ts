import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** One request a sandbox received, for assertions and for a person watching. */
export interface LoggedRequest {
  method: string;
  /** Path with query string, e.g. `/sap/opu/odata/sap/X_SRV/?sap-client=100`. */
  path: string;
  /** Status answered; 0 while pending or when the connection was dropped without an answer. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request in progress, as the sandbox's handler sees it. */
export interface Exchange {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
  /** Answers once; a string body is sent as is (text/plain unless headers say otherwise), anything else as JSON. */
  reply(status: number, body?: unknown, headers?: OutgoingHttpHeaders): void;
  /** Closes the connection without an answer, like a crashing proxy. */
  drop(): void;
  /** The request is processed, but its answer is lost: `reply` logs the status, then closes the connection. */
  loseAnswer(): void;
  /** Waits; rejects when the sandbox stops so nothing outlives it. */
  wait(ms: number): Promise<void>;
}

export interface SandboxServer {
  url: string;
  requests: LoggedRequest[];
  stop(): Promise<void>;
}

export interface ListenOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1: a sandbox holds personal data and has fixed credentials, keep it off the network. */
  host?: string;
  /** A name for the unexpected-error answer. */
  name: string;
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Starts the HTTP plumbing both sandboxes share: body reading, a request log, replies that record their
 * status, dropped connections and delays that end when the sandbox stops.
 *
 * @example
 * const server = await startSandboxServer((exchange) => exchange.reply(200, { ok: true }), { name: 'demo' });
 * await fetch(server.url); // { ok: true }
 * await server.stop();
 */
export async function startSandboxServer(
  handle: (exchange: Exchange) => void | Promise<void>,
  options: ListenOptions,
): Promise<SandboxServer> {
  const requests: LoggedRequest[] = [];
  const stopping = new AbortController();

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          res.writeHead(413, { 'content-type': 'text/plain' }).end('Request entity too large');
          return;
        }
        chunks.push(chunk);
      }
    } catch {
      return; // the client went away mid-body
    }
    const logged: LoggedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      status: 0,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(logged);

    let answerLost = false;
    const exchange: Exchange = {
      method: logged.method,
      url: new URL(logged.path, 'http://sandbox'),
      headers: req.headers,
      body: logged.body,
      reply(status, body, headers = {}) {
        if (res.headersSent) return;
        logged.status = status;
        // The client may have given up (timeout): the answer is logged, there is nobody to send it to.
        if (res.destroyed) return;
        if (answerLost) {
          req.socket.destroy();
          return;
        }
        const isText = typeof body === 'string';
        const payload = body === undefined ? '' : isText ? body : JSON.stringify(body);
        const type = isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
        res.writeHead(status, { 'content-type': type, ...headers }).end(payload);
      },
      drop() {
        req.socket.destroy();
      },
      loseAnswer() {
        answerLost = true;
      },
      wait(ms) {
        return sleep(ms, undefined, { signal: stopping.signal });
      },
    };

    try {
      await handle(exchange);
    } catch (error) {
      if (stopping.signal.aborted) return;
      console.error(`${options.name}: unexpected error: ${(error as Error).message}`);
      exchange.reply(500, `${options.name}: unexpected error`);
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}`,
    requests,
    stop() {
      stopping.abort();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * Takes the first queued fault aimed at `target` (faults without `on` aim at `defaultTarget`).
 *
 * @example
 * const queue = [{ on: 'csrf', status: 503 }, { status: 500 }];
 * takeFault(queue, 'post', 'post'); // { status: 500 }
 */
export function takeFault<F extends { on?: string }>(
  queue: F[],
  target: string,
  defaultTarget: string,
): F | undefined {
  const index = queue.findIndex((fault) => (fault.on ?? defaultTarget) === target);
  return index === -1 ? undefined : queue.splice(index, 1)[0];
}

/**
 * Reads the `Cookie` request header into name/value pairs.
 *
 * @example
 * parseCookies('a=1; sap-usercontext=sap-client=100'); // Map { 'a' => '1', 'sap-usercontext' => 'sap-client=100' }
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0) cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
  }
  return cookies;
}

/** A plausible-looking broken answer: what a proxy error page or a truncated write looks like. */
export const MALFORMED_BODY = '<html><body>Internal Server Error</body>';
