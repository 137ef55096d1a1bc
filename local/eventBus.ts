/**
 * The local EventBridge: an HTTP server on 127.0.0.1 answering PutEvents (JSON 1.1 protocol, as the service's
 * EventBridge client sends it with AWS_ENDPOINT_URL_EVENTBRIDGE pointing here) with the one rule the stack
 * deploys per client: `Record state changed` events of `dealer-gateway` whose `detail.client` has a webhook go to
 * that webhook. Each such delivery is on disk before PutEvents answers and is resumed after a restart.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../lib/events/constants.ts';
import type { WebhookSwitch } from '../lib/webhooks/disabledWebhooks.ts';
import type { WebhookSecrets } from '../lib/webhooks/secrets.ts';
import { localRegion } from './project.ts';
import {
  createWebhookDispatcher,
  stderrLog,
  type WebhookDispatcher,
  type WebhookLog,
  type WebhookRoute,
} from './webhookDispatcher.ts';
import { fileWebhookSwitch } from './webhookFlags.ts';
import { type WebhookRetrySettings, webhookRetrySettings } from './webhookRetry.ts';
import { watchedWebhookSecrets } from './webhookSecrets.ts';
import { type EventEnvelope, openWebhookStore, type WebhookStore } from './webhookStore.ts';

/** The account every local ARN and envelope names. */
export const LOCAL_ACCOUNT = '000000000000';
/** PutEvents takes at most 10 entries a request. */
const MAX_ENTRIES = 10;
const MAX_BODY_BYTES = 1024 * 1024;
const JSON_11 = 'application/x-amz-json-1.1';

export interface LocalEventBusOptions {
  /** Pending and dead deliveries live under `<dataDir>/webhooks/`. */
  dataDir: string;
  /** The bus names (or ARNs' names) PutEvents entries may name; others fail per entry. */
  busNames?: string[];
  /** The client's webhook; undefined when it declares none (its events match no rule). */
  routeOf: (client: string) => WebhookRoute | undefined;
  /** The client's webhook secrets now; default: `<dataDir>/webhook-secrets.json` as it stands. */
  secretsOf?: (client: string) => WebhookSecrets | undefined;
  /** Disabled webhooks; default: `<dataDir>/webhook-disabled.json`. */
  flags?: WebhookSwitch;
  /** For tests: the signatures' and rotation window's clock. */
  now?: () => number;
  /** For tests: the jitter's random source. */
  random?: () => number;
  region?: string;
  settings?: WebhookRetrySettings;
  log?: WebhookLog;
  /** Default 0: any free port. */
  port?: number;
}

export interface LocalEventBus {
  /** http://127.0.0.1:<port>: the value of AWS_ENDPOINT_URL_EVENTBRIDGE. */
  url: string;
  store: WebhookStore;
  dispatcher: WebhookDispatcher;
  /** Sets the bus names entries may name (the stack's buses, known once serverless.yml is resolved). */
  answerTo(names: string[]): void;
  /** Pending deliveries found on disk at start, now scheduled again. */
  resumed: number;
  /** Stops answering and delivering; what is pending stays on disk for the next start. */
  stop(): Promise<void>;
}

interface PutEventsEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Time?: unknown;
  Resources?: unknown;
}

type ResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** EventBridge's `time`: ISO 8601 to the second. */
const eventTime = (time: unknown): string => {
  // JSON 1.1 sends timestamps as epoch seconds; accept an ISO string too.
  const ms =
    typeof time === 'number' ? time * 1000 : typeof time === 'string' ? Date.parse(time) : Date.now();
  return new Date(Number.isFinite(ms) ? ms : Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/** `my-bus` or `arn:aws:events:<region>:<account>:event-bus/my-bus` → `my-bus`; unset → `default`. */
const busNameOf = (value: unknown): string => {
  if (typeof value !== 'string' || value === '') return 'default';
  const arn = /^arn:[^:]+:events:[^:]*:[^:]*:event-bus\/(.+)$/.exec(value);
  return arn ? arn[1] : value;
};

const parseDetail = (detail: unknown): Record<string, unknown> | undefined => {
  if (typeof detail !== 'string') return undefined;
  try {
    const parsed = JSON.parse(detail) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

const readBody = async (req: IncomingMessage): Promise<string | undefined> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
};

const answer = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': JSON_11, 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify(body));
};

/** A JSON 1.1 protocol error, as the SDK parses it (`__type`, `message`). */
const fault = (res: ServerResponse, status: number, type: string, message: string) =>
  answer(res, status, { __type: type, message });

/**
 * Starts the local event bus and resumes the deliveries a previous run left pending in `dataDir`.
 *
 * @example
 * const bus = await startLocalEventBus({ dataDir: '.data', busNames: ['dealer-gateway-local'], routeOf, secretsOf, flags });
 * // AWS_ENDPOINT_URL_EVENTBRIDGE=bus.url; PutEvents → webhooks
 * await bus.stop();
 */
export const startLocalEventBus = async (options: LocalEventBusOptions): Promise<LocalEventBus> => {
  const region = options.region ?? localRegion;
  const log = options.log ?? stderrLog;
  let busNames = new Set(options.busNames ?? []);
  const store = await openWebhookStore(options.dataDir);
  const dispatcher = createWebhookDispatcher({
    store,
    routeOf: options.routeOf,
    secretsOf: options.secretsOf ?? watchedWebhookSecrets(options.dataDir),
    flags: options.flags ?? fileWebhookSwitch(options.dataDir),
    now: options.now,
    random: options.random,
    settings: options.settings ?? webhookRetrySettings(),
    log,
  });

  /** One entry: its result, and (when a rule matches) its delivery, on disk before the answer. */
  const accept = async (entry: PutEventsEntry): Promise<ResultEntry> => {
    if (entry === null || typeof entry !== 'object') {
      return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Entry is not an object.' };
    }
    const bus = busNameOf(entry.EventBusName);
    if (!busNames.has(bus)) {
      return { ErrorCode: 'InvalidArgument', ErrorMessage: `Event bus ${bus} does not exist.` };
    }
    if (
      typeof entry.Source !== 'string' ||
      typeof entry.DetailType !== 'string' ||
      entry.Detail === undefined
    ) {
      return {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: 'Parameters Source, DetailType and Detail must be specified.',
      };
    }
    const detail = parseDetail(entry.Detail);
    if (!detail) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };

    const envelope: EventEnvelope = {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType,
      source: entry.Source,
      account: LOCAL_ACCOUNT,
      time: eventTime(entry.Time),
      region,
      resources: Array.isArray(entry.Resources) ? entry.Resources.map(String) : [],
      detail,
    };
    // The rule of each client's webhook: this source and detail-type, detail.client = the client.
    const client = typeof detail.client === 'string' ? detail.client : undefined;
    const matches =
      envelope.source === EVENT_SOURCE && envelope['detail-type'] === RECORD_STATE_CHANGED && client;
    if (matches && options.routeOf(client)) {
      const now = Date.now();
      const delivery = { id: envelope.id, client, envelope, createdAt: now, attempts: 0, nextAttemptAt: now };
      try {
        await store.save(delivery);
      } catch {
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'The event could not be stored.' };
      }
      dispatcher.enqueue(delivery);
    }
    // No rule matches (no webhook): accepted and dropped, as on AWS.
    return { EventId: envelope.id };
  };

  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/') {
        return fault(res, 404, 'UnknownOperationException', 'The local event bus answers POST / only.');
      }
      if (body === undefined) return fault(res, 413, 'ValidationException', 'Request too large.');
      const target = req.headers['x-amz-target'];
      if (target !== 'AWSEvents.PutEvents') {
        return fault(
          res,
          400,
          'UnknownOperationException',
          `Operation ${String(target)} is not supported locally.`,
        );
      }
      let request: { Entries?: unknown };
      try {
        request = JSON.parse(body) as { Entries?: unknown };
      } catch {
        return fault(res, 400, 'SerializationException', 'The request body is not JSON.');
      }
      const entries = request?.Entries;
      if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES) {
        return fault(res, 400, 'ValidationException', `Entries must hold 1 to ${MAX_ENTRIES} entries.`);
      }
      // Written side by side (each fsync waits on the disk, not on the others); results keep the entries' order.
      const results = await Promise.all((entries as PutEventsEntry[]).map(accept));
      answer(res, 200, {
        FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length,
        Entries: results,
      });
    } catch (error) {
      log({
        level: 'ERROR',
        message: 'local event bus: request failed',
        errorName: error instanceof Error ? error.name : typeof error,
      });
      if (!res.headersSent) fault(res, 500, 'InternalException', 'The local event bus failed.');
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const resumed = await dispatcher.resume();
  if (resumed > 0)
    log({ level: 'INFO', message: 'webhook deliveries resumed from the last run', count: resumed });

  return {
    url: `http://127.0.0.1:${port}`,
    store,
    dispatcher,
    resumed,
    answerTo(names) {
      busNames = new Set(names);
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await dispatcher.stop();
    },
  };
};
