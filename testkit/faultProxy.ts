/**
 * A real HTTP proxy in front of an AWS JSON-protocol endpoint (SQS, DynamoDB, EventBridge) that injects faults into chosen
 * calls, so that whoever calls through it sees exactly what a service sees when AWS misbehaves: 5xx answers,
 * refused batch entries, slow answers, no answer at all, and answers lost after the call took effect.
 *
 * Which call gets which fault is up to a policy, asked once per call with the operation name (the last part of
 * `X-Amz-Target`, e.g. `SendMessageBatch`, `PutItem`). The upstream may change while the proxy runs (a local
 * stack restarted on new emulator ports): pass a function that names it per call.
 *
 * `npm run soak` puts two of these between the API handlers of `npm start` and its emulators
 * (LOCAL_API_PROXY_SQS / LOCAL_API_PROXY_DYNAMODB) and three between its worker, reconciler and event publishing
 * and SQS, DynamoDB and the local EventBridge (LOCAL_DELIVERY_PROXY_SQS / _DYNAMODB / _EVENTBRIDGE);
 * testkit/faultyProxy.ts is a scripted use of it.
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBody } from './readBody.ts';

export type ProxyFault =
  /** Answer an AWS error of this status without forwarding (`type`: the error's `__type`). */
  | { kind: 'error'; status: number; type?: string }
  /** Forward after `ms`: a slow but successful call. */
  | { kind: 'delay'; ms: number }
  /** Forward nothing, hold the request for `ms`, then close the connection: no answer (the caller times out). */
  | { kind: 'hang'; ms: number }
  /** Forward, then close the connection instead of answering: the call took effect, its answer is lost. */
  | { kind: 'loseAnswer' }
  /** Forward, then hold the answer for `ms` (past the caller's timeout): took effect, answered too late. */
  | { kind: 'lateAnswer'; ms: number }
  /**
   * SendMessageBatch / PutEvents: take the first entry out and report it failed (SQS `InternalError`, EventBridge
   * `InternalFailure`), as both do at times.
   */
  | { kind: 'refuseEntry' };

export type FaultKind = ProxyFault['kind'];

/** Decides the fault of one call, or none (`undefined`: pass it through). */
export type FaultPolicy = (operation: string) => ProxyFault | undefined;

export interface FaultProxyOptions {
  /** The endpoint to forward to, or a function naming it per call (undefined: unreachable for now). */
  upstream: string | (() => string | undefined);
  policy?: FaultPolicy;
  /** Default 0: any free port. Always on 127.0.0.1. */
  port?: number;
}

export interface FaultProxy {
  /** http://127.0.0.1:<port>: the endpoint to give the caller. */
  endpoint: string;
  /** Calls received, and faults applied by kind. */
  counts(): { calls: number; faults: Partial<Record<FaultKind, number>> };
  setPolicy(policy: FaultPolicy | undefined): void;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'expect',
  'upgrade',
]);

const injectedEventFailure = { ErrorCode: 'InternalFailure', ErrorMessage: 'injected' };

/** The error type an AWS service of this target prefix answers for an internal error. */
const defaultErrorType = (target: string, status: number): string => {
  if (target.startsWith('AWSEvents')) return 'InternalException';
  if (target.startsWith('AmazonSQS')) {
    return status === 503 ? 'com.amazonaws.sqs#ServiceUnavailable' : 'com.amazonaws.sqs#InternalError';
  }
  return status === 503
    ? 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable'
    : 'com.amazonaws.dynamodb.v20120810#InternalServerError';
};

/**
 * Starts the proxy.
 *
 * @example
 * const proxy = await startFaultProxy({
 *   upstream: sqsEndpoint,
 *   policy: (operation) => (operation === 'SendMessageBatch' && Math.random() < 0.1 ? { kind: 'loseAnswer' } : undefined),
 * });
 * process.env.AWS_ENDPOINT_URL_SQS = proxy.endpoint;
 */
export const startFaultProxy = async (options: FaultProxyOptions): Promise<FaultProxy> => {
  let policy = options.policy;
  const upstreamOf =
    typeof options.upstream === 'string' ? () => options.upstream as string : options.upstream;
  let calls = 0;
  const faults: Partial<Record<FaultKind, number>> = {};
  const stopping = new AbortController();

  const server = createServer(async (req, res) => {
    res.on('error', () => {});
    const cut = () => req.socket.destroy();
    try {
      const body = await readBody(req);
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = target.split('.').pop() ?? '';
      calls++;
      const fault = policy?.(operation);
      if (fault) faults[fault.kind] = (faults[fault.kind] ?? 0) + 1;

      if (fault?.kind === 'error') {
        res.writeHead(fault.status, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            __type: fault.type ?? defaultErrorType(target, fault.status),
            message: 'injected failure',
          }),
        );
        return;
      }
      if (fault?.kind === 'hang') {
        await sleep(fault.ms, undefined, { signal: stopping.signal }).catch(() => {});
        cut();
        return;
      }
      if (fault?.kind === 'delay') await sleep(fault.ms, undefined, { signal: stopping.signal });

      let forwardBody = body;
      let refused: string | undefined;
      let refusedEvent = false;
      if (fault?.kind === 'refuseEntry' && operation === 'SendMessageBatch') {
        const parsed = JSON.parse(body.toString()) as { Entries: { Id: string }[] };
        refused = parsed.Entries.shift()?.Id;
        forwardBody = Buffer.from(JSON.stringify(parsed));
      }
      if (fault?.kind === 'refuseEntry' && operation === 'PutEvents') {
        const parsed = JSON.parse(body.toString()) as { Entries: unknown[] };
        if (parsed.Entries.length === 1) {
          // Nothing left to forward: the one entry fails, as EventBridge reports it.
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
          res.end(JSON.stringify({ FailedEntryCount: 1, Entries: [injectedEventFailure] }));
          return;
        }
        parsed.Entries.shift();
        refusedEvent = true;
        forwardBody = Buffer.from(JSON.stringify(parsed));
      }
      const upstream = upstreamOf();
      if (!upstream) {
        cut();
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([key]) => !HOP_BY_HOP.has(key)),
      ) as Record<string, string>;
      const answer = await fetch(`${upstream}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : forwardBody,
        signal: stopping.signal,
      });
      let text = await answer.text();
      if (fault?.kind === 'loseAnswer') {
        cut();
        return;
      }
      if (fault?.kind === 'lateAnswer') {
        await sleep(fault.ms, undefined, { signal: stopping.signal }).catch(() => {});
        if (req.socket.destroyed) return;
      }
      if (refused !== undefined && answer.ok) {
        const parsed = JSON.parse(text) as { Failed?: unknown[] };
        parsed.Failed = [
          ...(parsed.Failed ?? []),
          { Id: refused, SenderFault: false, Code: 'InternalError', Message: 'injected' },
        ];
        text = JSON.stringify(parsed);
      }
      if (refusedEvent && answer.ok) {
        // Results are in the order of the entries sent: the refused first one comes first.
        const parsed = JSON.parse(text) as { FailedEntryCount?: number; Entries?: unknown[] };
        parsed.FailedEntryCount = (parsed.FailedEntryCount ?? 0) + 1;
        parsed.Entries = [injectedEventFailure, ...(parsed.Entries ?? [])];
        text = JSON.stringify(parsed);
      }
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0',
      });
      res.end(text);
    } catch {
      // Upstream unreachable (a restarting stack), or the proxy stopping: the caller sees a network error.
      cut();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ calls, faults: { ...faults } }),
    setPolicy: (next) => {
      policy = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        stopping.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/**
 * An upstream read from a JSON file holding `{ [service]: endpoint }` (the local stack's localEndpointsFile),
 * read again whenever the file changes: the proxy follows a stack restarted on new emulator ports.
 *
 * @example
 * startFaultProxy({ upstream: upstreamFromFile(localEndpointsFile(dataDir), 'sqs') });
 */
export const upstreamFromFile = (file: string, service: string): (() => string | undefined) => {
  let seen = -1;
  let endpoint: string | undefined;
  return () => {
    try {
      const mtime = statSync(file).mtimeMs;
      if (mtime !== seen) {
        const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        endpoint = typeof parsed[service] === 'string' ? (parsed[service] as string) : undefined;
        seen = mtime;
      }
    } catch {
      // Not written yet, or being written: keep the last endpoint known.
    }
    return endpoint;
  };
};
