import type { RecordKind } from '../types.ts';
import { type Environment, type Setting, setting } from './environment.ts';
import { positiveInteger, required, seconds, share } from './parsers.ts';

/*
 * Every setting lib/ reads from the environment, with its parser and default (lib/settings/parsers.ts: a bad value
 * throws an error naming the variable). Each is read once per cold start (lib/settings/environment.ts); given an
 * environment, it reads that one instead (the tests, the examples).
 *
 * Read whole, when a downstream client is built (lib/delivery/downstreams.ts, through environment()): ERP_BASE_URL,
 * ERP_SERVICE_PATH, ERP_SAP_CLIENT, ERP_BATCH_SIZE, ERP_USERNAME, ERP_PASSWORD (lib/downstream/erp/config.ts) and
 * CRM_BASE_URL, CRM_API_VERSION, CRM_CASE_EXTERNAL_ID_FIELD, CRM_CASE_MAPPING_FILE, CRM_CLIENT_ID,
 * CRM_CLIENT_SECRET (lib/downstream/crm/config.ts); a secret's `<NAME>_PARAMETER` (lib/delivery/secrets.ts).
 */

/** The DynamoDB table holding status records, duplicate detection and idempotency keys (`RECORDS_TABLE`). */
export const recordsTable: Setting<string> = setting((env) => required('RECORDS_TABLE', env.RECORDS_TABLE));

/** The sales registrations' queue (`SALES_REGISTRATION_QUEUE_URL`). */
export const salesQueueUrl: Setting<string> = setting((env) =>
  required('SALES_REGISTRATION_QUEUE_URL', env.SALES_REGISTRATION_QUEUE_URL),
);

/** The cases' queue (`CASE_QUEUE_URL`). */
export const caseQueueUrl: Setting<string> = setting((env) => required('CASE_QUEUE_URL', env.CASE_QUEUE_URL));

/**
 * The queue of a kind of record.
 *
 * @example
 * queueUrlFor('caseRecord', { CASE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/cases' }) // that URL
 */
export const queueUrlFor = (kind: RecordKind, env?: Environment): string =>
  (kind === 'salesRegistration' ? salesQueueUrl : caseQueueUrl)(env);

/** Local debug mode (`DEBUG_ERRORS=true`): error answers may carry a stack trace. Never set on AWS. */
export const debugMode: Setting<boolean> = setting((env) => env.DEBUG_ERRORS === 'true');

/**
 * The URL the local service listens on (`LOCAL_API_URL`, e.g. http://localhost:3456): set by the local runner
 * (`npm start`, local/stack.ts) alone, never on AWS. GET /openapi.json names it as its local server.
 */
export const localApiUrl: Setting<string | undefined> = setting((env) => env.LOCAL_API_URL || undefined);

/** The stack's event bus (`EVENT_BUS_NAME`). */
export const eventBusName: Setting<string> = setting((env) => required('EVENT_BUS_NAME', env.EVENT_BUS_NAME));

/**
 * The webhook queue's URL (`WEBHOOK_QUEUE_URL`; absent on AWS, where it is made from the message's queue ARN; the
 * local runner and the tests set it).
 */
export const webhookQueueUrl: Setting<string | undefined> = setting(
  (env) => env.WEBHOOK_QUEUE_URL || undefined,
);

/** Where the clients' webhook secrets are in Secrets Manager: `<WEBHOOK_SECRETS_PREFIX><client>`. */
export const webhookSecretsPrefix: Setting<string> = setting((env) =>
  required('WEBHOOK_SECRETS_PREFIX', env.WEBHOOK_SECRETS_PREFIX),
);

/** How long a replaced webhook secret keeps signing beside the new one (`WEBHOOK_ROTATION_HOURS`, default 24). */
export const webhookRotationHours: Setting<number> = setting((env) =>
  positiveInteger('WEBHOOK_ROTATION_HOURS', env.WEBHOOK_ROTATION_HOURS, 24),
);

/**
 * When a failing webhook is tried again (lib/webhooks/retrySchedule.ts, for 3 days): the first window
 * (`WEBHOOK_RETRY_BASE_SECONDS`, default 60) doubling up to the longest (`WEBHOOK_RETRY_CAP_SECONDS`, default 6 h),
 * in ms. The tries are counted by the queue's receives (its maxReceiveCount, serverless.yml custom.webhooks).
 */
export const webhookRetryWindows: Setting<{ baseMs: number; capMs: number }> = setting((env) => ({
  baseMs: positiveInteger('WEBHOOK_RETRY_BASE_SECONDS', env.WEBHOOK_RETRY_BASE_SECONDS, 60) * 1000,
  capMs: positiveInteger('WEBHOOK_RETRY_CAP_SECONDS', env.WEBHOOK_RETRY_CAP_SECONDS, 21_600) * 1000,
}));

/** Where the API keys are: a Secrets Manager secret (`API_KEYS_SECRET`, AWS) or a JSON file (`API_KEYS_FILE`, local). */
export interface ApiKeysSource {
  secret?: string;
  file?: string;
}

/** The API keys' source (neither set: no keys, every request is refused). */
export const apiKeysSource: Setting<ApiKeysSource> = setting((env) => ({
  secret: env.API_KEYS_SECRET || undefined,
  file: env.API_KEYS_FILE || undefined,
}));

/** Reconciler settings, read from the environment. */
export interface ReconcileSettings {
  /**
   * An `accepted` record that nobody has queued or worked on for this long is queued again
   * (`RECONCILE_AFTER_SECONDS`, default 300). Far longer than an intake request can run (API Gateway stops at
   * 29 s), so a live request is never second-guessed.
   */
  reconcileAfterSeconds: number;
  /**
   * The longest wait between two re-queues of the same record (`RECONCILE_MAX_INTERVAL_SECONDS`, default 3600):
   * each re-queue of a record nobody has tried since doubles its wait from reconcileAfterSeconds up to this, so a
   * record waiting in a long queue backlog is not queued again every few minutes.
   */
  maxIntervalSeconds: number;
  /**
   * Records one run queues again at most, per kind (`RECONCILE_MAX_PER_RUN`, default 500): a large backlog is
   * worked off run by run, and the run's other work (events, purge) is never starved by it.
   */
  maxPerRun: number;
  /**
   * The same bound for a kind in the while after its downstream's hold closed (`RECONCILE_MAX_AFTER_HOLD`,
   * default 5000): the records held through the outage are all due at once, and the workers' copies of them are
   * hidden for hours, so the drain is as fast as the reconciler queues them; a run moves them a page (100) at a
   * time, about 50 pages.
   */
  maxAfterHold: number;
}

/**
 * The reconciler's settings.
 *
 * @example
 * reconcileSettings({ RECONCILE_AFTER_SECONDS: '60' }) // { reconcileAfterSeconds: 60, maxIntervalSeconds: 3600, maxPerRun: 500, maxAfterHold: 5000 }
 */
export const reconcileSettings: Setting<ReconcileSettings> = setting((env) => ({
  reconcileAfterSeconds: positiveInteger('RECONCILE_AFTER_SECONDS', env.RECONCILE_AFTER_SECONDS, 300),
  maxIntervalSeconds: positiveInteger(
    'RECONCILE_MAX_INTERVAL_SECONDS',
    env.RECONCILE_MAX_INTERVAL_SECONDS,
    3600,
  ),
  maxPerRun: positiveInteger('RECONCILE_MAX_PER_RUN', env.RECONCILE_MAX_PER_RUN, 500),
  maxAfterHold: positiveInteger('RECONCILE_MAX_AFTER_HOLD', env.RECONCILE_MAX_AFTER_HOLD, 5000),
}));

/** Delivery settings (docs/behaviour.md#delivery-and-retries), read from the environment. */
export interface DeliverySettings {
  /**
   * All tries, the first included, counted on the record (`tries`). The queue's maxReceiveCount is set far higher
   * (serverless.yml custom.delivery.maxReceiveCount): receives also count copies bounced by a lease.
   */
  maxAttempts: number;
  /** The wait after attempt n is at least this times 2^(n-1), plus at most 20 % jitter. */
  retryBaseSeconds: number;
  /**
   * How long a worker's claim on a record holds: longer than an invocation can run (the worker's function
   * timeout), so that no second copy of a message reaches the downstream while the first is still being delivered.
   */
  leaseSeconds: number;
}

/**
 * The delivery settings: `DELIVERY_MAX_ATTEMPTS` (default 5), `DELIVERY_RETRY_BASE_SECONDS` (default 30) and
 * `DELIVERY_LEASE_SECONDS` (default 90: the worker's 60 s timeout and a margin).
 *
 * @example
 * deliverySettings({ DELIVERY_MAX_ATTEMPTS: '3' }) // { maxAttempts: 3, retryBaseSeconds: 30, leaseSeconds: 90 }
 */
export const deliverySettings: Setting<DeliverySettings> = setting((env) => ({
  maxAttempts: positiveInteger('DELIVERY_MAX_ATTEMPTS', env.DELIVERY_MAX_ATTEMPTS, 5),
  retryBaseSeconds: positiveInteger('DELIVERY_RETRY_BASE_SECONDS', env.DELIVERY_RETRY_BASE_SECONDS, 30),
  leaseSeconds: positiveInteger('DELIVERY_LEASE_SECONDS', env.DELIVERY_LEASE_SECONDS, 90),
}));

/** Settings of the downstream hold (docs/behaviour.md#outages-and-holds). */
export interface OutageSettings {
  /** `OUTAGE_AFTER_FAILURES` (default 5): transient failures in a row, whatever the records, that open a hold. */
  afterFailures: number;
  /** `OUTAGE_PROBE_SECONDS` (default 30): at most one probe per this many seconds across all workers. */
  probeSeconds: number;
  /**
   * `OUTAGE_FAILURE_RATE` (default 0.5): a share of the last `rateWindow` calls that failed whole, at or above which
   * the downstream is held although its failures never come `afterFailures` in a row.
   */
  failureRate: number;
  /** `OUTAGE_RATE_WINDOW` (default 20): how many of a downstream's latest calls its failure rate is taken over. */
  rateWindow: number;
  /** `CRM_API_USAGE_SHARE` (default 0.8): a used/allowed share at or above it holds the CRM. */
  apiUsageShare: number;
  /**
   * `OUTAGE_STATE_CACHE_SECONDS` (default 5, 0 = always read): how long a worker instance trusts the hold it last
   * read before a success reads it again (a permit is always read fresh). See lib/outage/hold.ts for what it saves
   * and risks.
   */
  cacheSeconds: number;
}

/**
 * `OUTAGE_PROBE_SECONDS` alone (default 30), for a reader of the holds that needs no other hold setting (the
 * console's "Downstreams" page dates the last probe by it).
 *
 * @example
 * outageProbeSeconds({ OUTAGE_PROBE_SECONDS: '10' }) // 10
 */
export const outageProbeSeconds: Setting<number> = setting((env) =>
  positiveInteger('OUTAGE_PROBE_SECONDS', env.OUTAGE_PROBE_SECONDS, 30),
);

/**
 * The hold's settings; a bad value throws an error naming the setting and its rule.
 *
 * @example
 * outageSettings({ OUTAGE_PROBE_SECONDS: '10' })
 * // { afterFailures: 5, probeSeconds: 10, failureRate: 0.5, rateWindow: 20, apiUsageShare: 0.8, cacheSeconds: 5 }
 */
export const outageSettings: Setting<OutageSettings> = setting((env) => ({
  afterFailures: positiveInteger('OUTAGE_AFTER_FAILURES', env.OUTAGE_AFTER_FAILURES, 5),
  probeSeconds: outageProbeSeconds(env),
  failureRate: share('OUTAGE_FAILURE_RATE', env.OUTAGE_FAILURE_RATE, 0.5),
  rateWindow: positiveInteger('OUTAGE_RATE_WINDOW', env.OUTAGE_RATE_WINDOW, 20),
  apiUsageShare: share('CRM_API_USAGE_SHARE', env.CRM_API_USAGE_SHARE, 0.8),
  cacheSeconds: seconds('OUTAGE_STATE_CACHE_SECONDS', env.OUTAGE_STATE_CACHE_SECONDS, 5),
}));

/** How long what is kept, read from the environment. */
export interface RetentionSettings {
  /**
   * Days after a record settled that its personal fields are removed (`PERSONAL_DATA_RETENTION_DAYS`, default 30);
   * a `failed` record keeps them twice as long, unless it is redriven first.
   */
  personalDataDays: number;
  /**
   * Days after a record settled that its status record (ids, frame number, owner, state, attempts, times,
   * downstream id, redacted error) expires by TTL (`RECORD_RETENTION_DAYS`, default 400).
   */
  recordDays: number;
  /**
   * Days after a test record settled that it expires whole, personal fields and feed entries too
   * (`TEST_RETENTION_DAYS`, default 7): test records are for trying the API, not for keeping.
   */
  testDays: number;
}

/**
 * The retention settings.
 *
 * @example
 * retentionSettings({ PERSONAL_DATA_RETENTION_DAYS: '7' }) // { personalDataDays: 7, recordDays: 400, testDays: 7 }
 */
export const retentionSettings: Setting<RetentionSettings> = setting((env) => ({
  personalDataDays: positiveInteger('PERSONAL_DATA_RETENTION_DAYS', env.PERSONAL_DATA_RETENTION_DAYS, 30),
  recordDays: positiveInteger('RECORD_RETENTION_DAYS', env.RECORD_RETENTION_DAYS, 400),
  testDays: positiveInteger('TEST_RETENTION_DAYS', env.TEST_RETENTION_DAYS, 7),
}));

/** Who signs people in to the operations console, and for which client (lib/console). */
export interface ConsoleAuthSettings {
  /**
   * The OpenID Connect issuer (`CONSOLE_ISSUER_URL`): on AWS the stage's Cognito user pool
   * (`https://cognito-idp.<region>.amazonaws.com/<pool id>`), under `npm start` the local provider
   * (local/oidcProvider.ts). Exactly as the tokens' `iss` spells it; its discovery document names the keys an ID
   * token must be signed with.
   */
  issuer: string;
  /** The console's client id (`CONSOLE_CLIENT_ID`): the audience every ID token must be issued for. */
  clientId: string;
}

/**
 * The console's sign-in settings; both must be set (the console API refuses nothing silently without them).
 *
 * @example
 * consoleAuthSettings({ CONSOLE_ISSUER_URL: 'http://127.0.0.1:4100', CONSOLE_CLIENT_ID: 'console' })
 * // { issuer: 'http://127.0.0.1:4100', clientId: 'console' }
 */
export const consoleAuthSettings: Setting<ConsoleAuthSettings> = setting((env) => ({
  issuer: required('CONSOLE_ISSUER_URL', env.CONSOLE_ISSUER_URL?.trim()),
  clientId: required('CONSOLE_CLIENT_ID', env.CONSOLE_CLIENT_ID?.trim()),
}));

/**
 * Where the console's "Activity" page reads records accepted, delivered and failed per hour
 * (`CONSOLE_ACTIVITY_SOURCE`): `cloudwatch`, the service's metrics (on AWS, the default), or `store`, the records
 * table itself (npm start, which has no CloudWatch).
 *
 * @example
 * consoleActivitySource({ CONSOLE_ACTIVITY_SOURCE: 'store' }) // 'store'
 */
export const consoleActivitySource: Setting<'cloudwatch' | 'store'> = setting((env) => {
  const value = env.CONSOLE_ACTIVITY_SOURCE?.trim() || 'cloudwatch';
  if (value !== 'cloudwatch' && value !== 'store')
    throw new Error('CONSOLE_ACTIVITY_SOURCE must be cloudwatch or store');
  return value;
});

/** The namespace and service dimension of the service's metrics (lib/observability/metrics.ts publishes them so). */
export const metricsIdentity: Setting<{ namespace: string; service: string }> = setting((env) => ({
  namespace: env.POWERTOOLS_METRICS_NAMESPACE || 'DealerGateway',
  service: env.POWERTOOLS_SERVICE_NAME || 'dealer-gateway',
}));

/**
 * Where the console's browser app exchanges its code and renews its token (`CONSOLE_SIGN_IN_ORIGIN`): on AWS the
 * user pool's hosted domain (`https://<prefix>.auth.<region>.amazoncognito.com`), which is not the issuer's host;
 * under `npm start` the local provider itself. Only its origin is used: the console page's `connect-src`.
 *
 * @example
 * consoleSignInOrigin({ CONSOLE_SIGN_IN_ORIGIN: 'https://dg-dev-1a2b.auth.eu-west-1.amazoncognito.com/' })
 * // 'https://dg-dev-1a2b.auth.eu-west-1.amazoncognito.com'
 */
export const consoleSignInOrigin: Setting<string> = setting(
  (env) => new URL(required('CONSOLE_SIGN_IN_ORIGIN', env.CONSOLE_SIGN_IN_ORIGIN?.trim())).origin,
);

/** Where spans go: an OTLP/HTTP (JSON) URL, and for X-Ray's OTLP endpoint the region its requests are signed for. */
export interface TracesTarget {
  url: string;
  /** Set when the requests are signed with Signature V4 for X-Ray (`TRACES_EXPORT=xray`). */
  xrayRegion?: string;
}

/**
 * Where spans are exported (lib/observability/tracing.ts), by OTLP over HTTP (JSON). `TRACES_EXPORT`:
 * - `on` (the default): to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else to `OTEL_EXPORTER_OTLP_ENDPOINT` +
 *   `/v1/traces` (the OpenTelemetry convention), unsigned; nothing when neither is set;
 * - `xray` (serverless.yml sets it on AWS): to CloudWatch's X-Ray OTLP endpoint of the function's region
 *   (`https://xray.<region>.amazonaws.com/v1/traces`, or the SDK's `AWS_ENDPOINT_URL_XRAY` / `AWS_ENDPOINT_URL`
 *   override + `/v1/traces`), signed with the function role's credentials; the OTLP variables, when set, still
 *   name the URL (a VPC endpoint, another collector);
 * - `off`: nothing exported (spans are still made: trace ids reach records, logs and downstream requests).
 *
 * @example
 * tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }) // { url: 'http://127.0.0.1:4318/v1/traces' }
 * tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', TRACES_EXPORT: 'off' }) // undefined
 * tracesExport({ TRACES_EXPORT: 'xray', AWS_REGION: 'eu-west-1' })
 * // { url: 'https://xray.eu-west-1.amazonaws.com/v1/traces', xrayRegion: 'eu-west-1' }
 */
export const tracesExport: Setting<TracesTarget | undefined> = setting((env) => {
  const mode = env.TRACES_EXPORT?.trim() || 'on';
  if (mode !== 'on' && mode !== 'off' && mode !== 'xray')
    throw new Error('TRACES_EXPORT must be xray, on or off');
  if (mode === 'off') return undefined;
  const withPath = (base: string) => `${base.replace(/\/+$/, '')}/v1/traces`;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const otlp = traces || (base ? withPath(base) : undefined);
  if (mode === 'on') return otlp ? { url: otlp } : undefined;
  const region = required('AWS_REGION', env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim());
  const override = (env.AWS_ENDPOINT_URL_XRAY || env.AWS_ENDPOINT_URL)?.trim();
  const domain = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  const xray = override ? withPath(override) : `https://xray.${region}.${domain}/v1/traces`;
  return { url: otlp ?? xray, xrayRegion: region };
});

/**
 * The file `npm start` keeps every span in (`TRACES_FILE`, set by the local runner alone: local/traceReceiver.ts),
 * which the console's record page draws its trace from; undefined on AWS, where the traces are X-Ray's, and under
 * npm start when a developer's own collector takes the spans instead.
 *
 * @example
 * keptTracesFile({ TRACES_FILE: '/home/me/dealer-gateway/.data/traces.jsonl' }) // that path
 */
export const keptTracesFile: Setting<string | undefined> = setting(
  (env) => env.TRACES_FILE?.trim() || undefined,
);
