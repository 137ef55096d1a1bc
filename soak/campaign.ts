/**
 * The fault campaign behind `npm run soak` (scripts/soak.ts) and tests/e2e/soak.test.ts.
 *
 * It starts the SAP and Salesforce sandboxes in this process (to inject faults and read what they received), two
 * fault proxies between the API handlers and SQS / DynamoDB (LOCAL_API_PROXY_SQS / LOCAL_API_PROXY_DYNAMODB), three
 * between the worker, the reconciler and their event publishing and SQS / DynamoDB / the bus
 * (LOCAL_DELIVERY_PROXY_SQS / _DYNAMODB / _EVENTBRIDGE), and
 * `npm start` on a data directory of its own; sends the workload (workload.ts) with faults at every boundary
 * (chaos.ts) and kills `npm start` with SIGKILL of its whole process group a few times on the way, starting it
 * again on the same data; then, in a quiet period without faults, waits (bounded) until nothing is `accepted`
 * any more, and reconciles answers, deliveries and statuses record by record (ledger.ts); last, waits (bounded)
 * for the state-change event of every settled record of a client with a webhook at the sandbox webhook receiver
 * (events.ts).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientsConfig } from '../lib/clients/clientsConfig.ts';
import { readKeptSpans } from '../lib/observability/keptSpans.ts';
import { eventSourceOfFunction } from '../local/eventSources.ts';
import { freePorts } from '../local/ports.ts';
import { resolvedServerlessConfig } from '../local/serverlessConfig.ts';
import { localEndpointsFile } from '../local/stack.ts';
import { tracesFile } from '../local/traceReceiver.ts';
import { salesforceDeliveryCalls } from '../sandbox/salesforceCollections.ts';
import { startSalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import { sapDeliveryCalls } from '../sandbox/sapBatch.ts';
import { startSapSandbox } from '../sandbox/sapSandbox.ts';
import type { LoggedRequest } from '../sandbox/server.ts';
import { type FaultProxy, startFaultProxy, upstreamFromFile } from '../testkit/faultProxy.ts';
import {
  createIntakeWeather,
  type DeliveryService,
  deliveryPolicy,
  intakePolicy,
  startDownstreamChaos,
} from './chaos.ts';
import { sendWithRetries } from './client.ts';
import { type ClientTimes, deliveryTimesByClient } from './clientTimes.ts';
import { watchDeadLetters } from './deadLetters.ts';
import {
  checkEvents,
  deliveriesOnBus,
  diagnoseMissing,
  type EventCheck,
  type EventCounts,
  eventsKept,
  personalValueIndex,
  type ReceivedHook,
  receivedHooks,
  settledOf,
  statusRecordsInStore,
} from './events.ts';
import { type FeedCounts, feedKept, feedUntilComplete } from './feed.ts';
import { type HoldFigures, holdFigures } from './holdFigures.ts';
import { createHoldWatch, openingCallsInStore, pollHolds } from './holdWatch.ts';
import { type IndexAgreement, indexAgreement, indexesAgree } from './indexAgreement.ts';
import {
  type LedgerCounts,
  type PlanResult,
  promiseKept,
  reconcile,
  type StatusLookup,
  salesforceCallsOf,
  sapCallsOf,
} from './ledger.ts';
import { acceptedInStore, forEachLimited, lookUpStatus } from './lookups.ts';
import {
  type DeliveryCallFigures,
  deliveryCallFigures,
  type OutageFigures,
  outageFigures,
} from './outageFigures.ts';
import { seededRandom } from './random.ts';
import { createService } from './service.ts';
import { type SlowReceiverFigures, slowReceiver, slowReceiverFigures } from './slowReceiver.ts';
import {
  checkTestMode,
  isTestPlan,
  liveLedgerInput,
  sentTestRecords,
  type TestModeCounts,
  testModeKept,
} from './testMode.ts';
import { type TraceWholeFigures, traceWhole } from './traceWhole.ts';
import {
  callerTraceparent,
  clientOf,
  createWorkload,
  FLOODING_CLIENT,
  type Operation,
  type SoakRecord,
} from './workload.ts';

export interface SoakOptions {
  /** Fresh records to send. Default 5,000. */
  records?: number;
  /**
   * Of them, cases the flooding client (workload.ts FLOODING_CLIENT) sends first, as fast as the traffic goes: a
   * backlog on the cases queue that the web forms' cases must not wait behind. Default a quarter of the records.
   */
  flood?: number;
  /**
   * The share of the other plans the test client sends (testMode.ts): one new sale or case each, with the
   * simulators' magic last names and ordinary ones. Default 0.08.
   */
  testShare?: number;
  /** SIGKILLs of npm start (each followed by a start) during the traffic. Default 3. */
  restarts?: number;
  /** Plans in flight at once (a race counts once). Default 12. */
  concurrency?: number;
  /** Seed of the workload. Default: random. */
  seed?: number;
  /** Tries per request, the first included. Default 6. */
  maxTries?: number;
  /**
   * How long the SAP outage lasts (the sandbox switched down); 0: none. Default 90: five times as long as a
   * record's five attempts take at the campaign's 1 s backoff base (1 + 2 + 4 + 8 s, plus jitter): every record
   * sent during it would be `failed` without the hold (docs/behaviour.md#outages-and-holds); and many
   * times the probe period and the re-queue delay, so the held records' messages are handed back and re-queued
   * again and again (their hidden time grows with the hold) while sales keep arriving, alone and several in one
   * request (one `$batch`).
   */
  outageSeconds?: number;
  /**
   * OUTAGE_PROBE_SECONDS handed to the service: at most one probe per this many seconds while held. Default 2:
   * short, so the outage spans many probe periods and the first delivery after it is due soon (holdFigures.ts).
   */
  probeSeconds?: number;
  /** Bound of the quiet period (waiting until nothing is `accepted`). Default 180. */
  drainSeconds?: number;
  /** The quiet period also ends when nothing has moved for this long. Default 60. */
  stallSeconds?: number;
  /** Bound of the traffic phase: no new plan after it. Default 1,800. */
  maxTrafficSeconds?: number;
  /**
   * RECONCILE_AFTER_SECONDS handed to the service: its reconciler queues again a record left `accepted` by
   * nobody for this long. Default 12: just longer than a local intake request can run (the API functions'
   * timeout is 10 s), so the outage spans several re-queue windows.
   */
  reconcileAfterSeconds?: number;
  /**
   * RECONCILE_INTERVAL_SECONDS handed to the service: its reconciler runs this often (the runs follow one another,
   * so a run longer than this delays the next). Default 2, as short as a run over the campaign's thousands of
   * open records and outboxes keeps up with on two cores. With the probe period it sets the goal of the first
   * delivery after the outage.
   */
  reconcileIntervalSeconds?: number;
  /**
   * The wait for the state-change events at the webhook receiver after the look-ups ends once none of the missing
   * ones has arrived for this long (at most 4 times as long in all). Default 90: an event a SIGKILL left in a
   * record's outbox is published by the reconciler 60 s after the change (checked every 5 s). A backlog is no
   * stall: the local bus calls a webhook at most 10 times a second (its `rateLimitPerSecond`), fewer than the
   * campaign settles sales at its peaks.
   */
  eventsWaitSeconds?: number;
  /**
   * How long the flooding client's webhook receiver answers after 10 s (slowReceiver.ts), from 30 % of the records
   * planned (before the outage; a SIGKILL due meanwhile waits for its end); 0: never. The slow client is the one with the most
   * events (the worst case for the others), and the one measured is the test client, whose own events never
   * outrun its rate limit: the flooding client's own webhook backlog (10 a second, fewer than it settles at its
   * peaks) is its own rate limit's doing, which says nothing of another client's receiver. The worker's side (SQS, the
   * store, the bus) is kept free of faults meanwhile, so that the other clients' events are published at once and
   * their delay is the webhook path's.
   * Default 60.
   */
  slowReceiverSeconds?: number;
  /** POWERTOOLS_LOG_LEVEL of the service. Default WARN (less to print on two cores). */
  serviceLogLevel?: string;
  /**
   * Whether the verdict holds the recovery to its time goal (the first delivery within a probe period and a reconciler
   * period of SAP coming back). Default true (`npm run soak`); the test suite's short form reports the figure without
   * judging it: a time is the bench's to measure, not a test's to assert on a busy machine.
   */
  timeGoals?: boolean;
  /**
   * Keep the data directory (its path is in the report), with every line the service wrote in `service.log`. A
   * red run keeps it whatever this says.
   */
  keepDataDir?: boolean;
  log?: (line: string) => void;
  /** Aborting ends the campaign early: it cleans up and rejects. */
  signal?: AbortSignal;
}

export interface SoakReport extends LedgerCounts {
  ok: boolean;
  /** The SAP outage: calls that reached SAP against the probes allowed, records failed that were sent during it. */
  outage: OutageFigures;
  /** The hold: the first delivery after SAP came back, holds opened while a downstream answered (holdFigures.ts). */
  hold: HoldFigures & { salesDuringOutage: { alone: number; together: number } };
  /** Delivery calls each downstream received, and records per call. */
  calls: DeliveryCallFigures;
  seed: number;
  run: string;
  settings: Required<Omit<SoakOptions, 'log' | 'seed' | 'keepDataDir' | 'signal' | 'timeGoals'>>;
  restarts: { kills: number; starts: number; unexpectedExits: number; startSeconds: number[] };
  faults: {
    intakeSqs: Record<string, number>;
    intakeDynamodb: Record<string, number>;
    intakeStorms: number;
    /** Between the worker / reconciler / event publishing and SQS, DynamoDB and the bus. */
    deliverySqs: Record<string, number>;
    deliveryDynamodb: Record<string, number>;
    deliveryEventBridge: Record<string, number>;
    downstream: Record<string, number>;
  };
  /** The state-change events at the webhook receiver (events.ts). */
  events: EventCounts;
  /** The event feed, read by each client (feed.ts). */
  feed: FeedCounts;
  /** The test client's records: none at SAP or Salesforce, none dead-lettered, each as its name says (testMode.ts). */
  testMode: TestModeCounts;
  /** The other webhook clients' delay while the flooding client's receiver was slow (slowReceiver.ts). */
  slowReceiver: SlowReceiverFigures;
  /** The store's indexes against its items, read once npm start stopped (indexAgreement.ts). */
  indexes: IndexAgreement;
  /**
   * Every delivered record's trace whole in the spans npm start kept, read once it stopped (traceWhole.ts); null
   * when the store's status records could not be read (no verdict then: the run is red).
   */
  traces: TraceWholeFigures | null;
  /** 200 to delivered, by client and kind: the quiet clients' beside the flooding client's (clientTimes.ts). */
  clients: ClientTimes[];
  seconds: { traffic: number; drain: number; lookups: number; events: number; total: number };
  /** Whether the quiet period ended with nothing `accepted` (false: its bound or the stall rule ended it). */
  drained: boolean;
  dataDir?: string;
}

/**
 * By record id: when a request of the plan that sent it was answered 504 (the API function's timeout): an intake
 * invocation so stopped sent none of its spans (traceWhole.ts).
 */
const intakeTimeouts = (
  results: readonly PlanResult[],
  stored: readonly { id: string; token?: string }[],
): Map<string, number[]> => {
  const times = new Map<string, number[]>();
  const byToken = new Map<string, number[]>();
  for (const { plan, sends } of results) {
    const answers = sends.flatMap((send) => send.answers);
    const at = answers.flatMap((answer) => (answer.status === 504 && answer.at ? [answer.at] : []));
    if (at.length === 0) continue;
    for (const id of new Set(answers.flatMap((answer) => answer.ids ?? []))) times.set(id, at);
    for (const record of plan.records)
      byToken.set(record.token, [...(byToken.get(record.token) ?? []), ...at]);
  }
  // A record whose plan never got a 200 is found by its token.
  for (const record of stored) {
    const at = record.token === undefined ? undefined : byToken.get(record.token);
    if (at && !times.has(record.id)) times.set(record.id, at);
  }
  return times;
};

/**
 * OUTAGE_AFTER_FAILURES handed to the service: 3, below the default 5, so a hold opens soon, and any answers
 * mistaken for failures (a Collections call answered in part) would open one too (holdFigures.ts).
 */
const OUTAGE_AFTER_FAILURES = 3;

/** The service's ERP concurrency cap (serverless.yml's default): SAP calls that may be in flight as a hold opens. */
const ERP_MAX_CONCURRENCY = 2;

/** DELIVERY_MAX_ATTEMPTS handed to the service: a `FAIL` test record ends `failed` after this many. */
const DELIVERY_MAX_ATTEMPTS = 5;

const SAP_CREDENTIALS = { username: 'SOAKUSER', password: 'soak-pass' };
const SF_CREDENTIALS = { clientId: 'soak-client', clientSecret: 'soak-secret' };

/** Records the arrival time of every request a sandbox logs: `times[i]` belongs to `requests[i]`. */
const stampArrivals = (requests: LoggedRequest[]): number[] => {
  const times: number[] = [];
  const push = requests.push.bind(requests);
  requests.push = (...items: LoggedRequest[]) => {
    for (const _ of items) times.push(Date.now());
    return push(...items);
  };
  return times;
};

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/**
 * How long a worker leaves publishing to the reconciler after the bus failed it (lib/outbox/publish.ts, 30 s): the
 * slow receiver's delays are measured from this long into its window, once faults before it no longer count.
 */
const BUS_PAUSE_MS = 30_000;
/**
 * How long the worker's side stays free of faults after the slow receiver's window: long enough for a record
 * changed at the window's end to be published (its outcome written, then the bus and the feed called).
 */
const PUBLISH_GRACE_MS = 15_000;
/**
 * No SIGKILL from this long before SAP comes back to this long after: a restart (10-20 s on a busy machine) then is
 * what the first delivery after the outage would measure. Earlier in the outage a kill is over before SAP is back.
 */
const KILL_QUIET_AROUND_RECOVERY_MS = 30_000;

const proxyCounts = (proxy: FaultProxy): Record<string, number> => ({
  calls: proxy.counts().calls,
  ...proxy.counts().faults,
});

/**
 * The SAP worker's event source batching window, from serverless.yml as resolved for `npm start` (the last
 * resolution `npm start` cached, else resolved now): a lone probe waits for it before the worker runs.
 */
const erpBatchingWindowSeconds = async (): Promise<number> =>
  eventSourceOfFunction(await resolvedServerlessConfig(), 'erpDelivery').batchingWindowSeconds;

export const runSoak = async (options: SoakOptions = {}): Promise<SoakReport> => {
  const settings = {
    records: options.records ?? 5_000,
    flood: options.flood ?? Math.floor((options.records ?? 5_000) / 4),
    testShare: options.testShare ?? 0.08,
    restarts: options.restarts ?? 3,
    concurrency: options.concurrency ?? 12,
    maxTries: options.maxTries ?? 6,
    outageSeconds: options.outageSeconds ?? 90,
    probeSeconds: options.probeSeconds ?? 2,
    drainSeconds: options.drainSeconds ?? 180,
    stallSeconds: options.stallSeconds ?? 60,
    maxTrafficSeconds: options.maxTrafficSeconds ?? 1_800,
    reconcileAfterSeconds: options.reconcileAfterSeconds ?? 12,
    reconcileIntervalSeconds: options.reconcileIntervalSeconds ?? 2,
    eventsWaitSeconds: options.eventsWaitSeconds ?? 90,
    slowReceiverSeconds: options.slowReceiverSeconds ?? 60,
    serviceLogLevel: options.serviceLogLevel ?? 'WARN',
  };
  const log = options.log ?? ((line: string) => process.stderr.write(`[soak] ${line}\n`));
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const random = seededRandom(seed);
  const run = Math.floor(random.next() * 36 ** 4)
    .toString(36)
    .toUpperCase()
    .padStart(4, '0');
  const startedAt = Date.now();

  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-soak-'));
  const [sap, salesforce] = await Promise.all([
    startSapSandbox(SAP_CREDENTIALS),
    startSalesforceSandbox(SF_CREDENTIALS),
  ]);
  const sapTimes = stampArrivals(sap.requests);
  const sfTimes = stampArrivals(salesforce.requests);
  const weather = createIntakeWeather();
  const endpoints = localEndpointsFile(dataDir);
  const [sqsProxy, dynamoProxy] = await Promise.all([
    startFaultProxy({ upstream: upstreamFromFile(endpoints, 'sqs'), policy: intakePolicy(weather.sqs) }),
    startFaultProxy({
      upstream: upstreamFromFile(endpoints, 'dynamodb'),
      policy: intakePolicy(weather.dynamodb),
    }),
  ]);
  // The worker, the reconciler and their event publishing: faults only while npm start is up (not during its own
  // start-up, whose re-queueing of open records the campaign does not fault) and until the quiet period.
  let deliveryFaults = true;
  const deliveryActive = () => deliveryFaults && service.isUp();
  /** The slow receiver's window: none yet, under way, or over (its times). */
  let slow: ReturnType<typeof slowReceiver> | undefined;
  let slowWindow: { from: number; to: number } | undefined;
  const deliveryProxies = Object.fromEntries(
    await Promise.all(
      (['sqs', 'dynamodb', 'eventbridge'] as const).map(
        async (name) =>
          [
            name,
            await startFaultProxy({
              upstream: upstreamFromFile(endpoints, name),
              // No faults on the worker's side while a receiver is slow: any fault of a publication (the bus, the
              // feed's write, the outbox's) leaves the worker's events to the reconciler for 30 s, minutes late
              // whatever the webhooks do; the other clients' events are published at once and their delay is the
              // webhook path's (a first run with the store's faults on measured 2 of 37 events so delayed). And for
              // PUBLISH_GRACE_MS after it: a change of the window's last moments is published just after it (three
              // events changed 0.5 s before its end met the bus's faults and came 30 s late).
              policy: deliveryPolicy(
                name,
                () =>
                  deliveryActive() &&
                  slow === undefined &&
                  (slowWindow === undefined || Date.now() > slowWindow.to + PUBLISH_GRACE_MS),
              ),
            }),
          ] as const,
      ),
    ),
  ) as Record<DeliveryService, FaultProxy>;
  const [port] = await freePorts(1);
  // Hold openings, from the service's log lines and its hold items (holdWatch.ts).
  const holdWatch = createHoldWatch();
  let stopHoldPolls: (() => Promise<void>) | undefined;
  /** The record ids seen in the dead-letter queues (deadLetters.ts): a test record must never be one. */
  let stopDeadLetterWatch: (() => Promise<Set<string>>) | undefined;
  // What the service said, beside its store: kept with it when the run is red or --keep-data asks.
  const serviceLog = createWriteStream(join(dataDir, 'service.log'));
  let keepData = options.keepDataDir === true;
  const service = createService({
    port,
    dataDir,
    log,
    onLine: (line) => {
      holdWatch.noteLine(line);
      serviceLog.write(`${line}\n`);
    },
    env: {
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: SAP_CREDENTIALS.username,
      ERP_PASSWORD: SAP_CREDENTIALS.password,
      CRM_BASE_URL: salesforce.url,
      CRM_CLIENT_ID: SF_CREDENTIALS.clientId,
      CRM_CLIENT_SECRET: SF_CREDENTIALS.clientSecret,
      DELIVERY_RETRY_BASE_SECONDS: '1',
      DELIVERY_MAX_ATTEMPTS: String(DELIVERY_MAX_ATTEMPTS),
      OUTAGE_AFTER_FAILURES: String(OUTAGE_AFTER_FAILURES),
      OUTAGE_PROBE_SECONDS: String(settings.probeSeconds),
      // A record whose worker was killed mid-delivery is delivered again once its claim runs out (default 90 s).
      DELIVERY_LEASE_SECONDS: '30',
      // A webhook message in flight at a SIGKILL comes back after this (AWS: the queue's 360 s), within the wait
      // for the events.
      LOCAL_WEBHOOK_VISIBILITY_SECONDS: '20',
      RECONCILE_AFTER_SECONDS: String(settings.reconcileAfterSeconds),
      RECONCILE_INTERVAL_SECONDS: String(settings.reconcileIntervalSeconds),
      LOCAL_API_PROXY_SQS: sqsProxy.endpoint,
      LOCAL_API_PROXY_DYNAMODB: dynamoProxy.endpoint,
      LOCAL_DELIVERY_PROXY_SQS: deliveryProxies.sqs.endpoint,
      LOCAL_DELIVERY_PROXY_DYNAMODB: deliveryProxies.dynamodb.endpoint,
      LOCAL_DELIVERY_PROXY_EVENTBRIDGE: deliveryProxies.eventbridge.endpoint,
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: settings.serviceLogLevel,
    },
  });
  let chaos: ReturnType<typeof startDownstreamChaos> | undefined;

  try {
    log(
      `seed ${seed}, run ${run}: ${settings.records} records, ${settings.restarts} restart(s), data ${dataDir}`,
    );
    await service.start();
    log(`npm start ready on ${service.url}`);
    stopHoldPolls = pollHolds(dataDir, holdWatch);
    stopDeadLetterWatch = watchDeadLetters(dataDir);
    chaos = startDownstreamChaos({ sap, salesforce });

    // ---- Traffic, with restarts and one SAP outage on the way.
    const workload = createWorkload(settings.records, run, random, settings.flood, settings.testShare);
    const results: PlanResult[] = [];
    const kills: number[] = [];
    const trafficStarted = Date.now();
    const trafficDeadline = trafficStarted + settings.maxTrafficSeconds * 1000;
    let trafficDone = false;

    const killPoints = Array.from(
      { length: settings.restarts },
      (_, i) => settings.records * ((i + 1) / (settings.restarts + 1) + (random.next() - 0.5) * 0.08),
    );
    /** The outage as it happened: when, and what reached SAP meanwhile. */
    const outage = { from: 0, to: 0, calls: 0, deliveryCalls: 0, queuedAtStart: 0 };
    let outageEnded: Promise<void> | undefined;
    /** When each record's request was answered 200 (by token; the first such answer). */
    const answeredAt = new Map<string, number>();
    const chaosLoop = (async () => {
      let outageDone = settings.outageSeconds <= 0;
      /** No SIGKILL in this span (ms): around SAP's coming back, the recovery's measure. */
      const killsPaused = { from: Number.POSITIVE_INFINITY, to: 0 };
      let lastLog = Date.now();
      while (!trafficDone) {
        const planned = workload.planned();
        // Not while a receiver is slow: a restart stops every webhook for its few seconds, which is no receiver's
        // doing (a run that killed in the window measured a batch's events 6 s late); the kill comes
        // PUBLISH_GRACE_MS after it, once the window's last changes are published (a kill due in the window and made
        // at its end stopped three changed 0.3 s before, published by the reconciler 30 s late).
        // Nor in the 30 s before SAP comes back and the 30 s after: a restart then (its 10-20 s on a busy machine) is
        // what the first delivery after the outage would measure (two runs at load 13 measured 13 s and 24 s against
        // 6 s); pausing for the whole outage left a quiet machine's run one SIGKILL of three, its traffic over first.
        if (
          killPoints.length > 0 &&
          planned >= killPoints[0] &&
          slow === undefined &&
          (slowWindow === undefined || Date.now() > slowWindow.to + PUBLISH_GRACE_MS) &&
          !(Date.now() >= killsPaused.from && Date.now() < killsPaused.to)
        ) {
          killPoints.shift();
          kills.push(Date.now());
          try {
            await service.kill();
            log(`SIGKILL of npm start's process group (${kills.length}) at ${planned} records planned`);
            await sleep(200 + Math.random() * 1300);
            const restarted = Date.now();
            await service.start();
            log(`npm start ready again after ${seconds(Date.now() - restarted)} s`);
          } catch (error) {
            // The traffic waiting for the service gets this error and the campaign ends with it.
            service.abandon(error instanceof Error ? error : new Error(String(error)));
            return;
          }
        }
        if (
          slow === undefined &&
          slowWindow === undefined &&
          settings.slowReceiverSeconds > 0 &&
          planned >= settings.records * 0.3
        ) {
          slow = slowReceiver({ dataDir, client: FLOODING_CLIENT });
          log(
            `the flooding client's webhook receiver answers after 10 s for ${settings.slowReceiverSeconds} s`,
          );
        }
        if (slow && Date.now() - slow.from >= settings.slowReceiverSeconds * 1000) {
          slowWindow = await slow.stop();
          slow = undefined;
          log("the flooding client's webhook receiver answers at once again");
        }
        if (!outageDone && planned >= settings.records * 0.6) {
          outageDone = true;
          if (chaos) {
            // Counted from now, when the outage may begin a little later (its queued faults taken first): the span
            // starts early rather than late; its end is set again when SAP is back.
            killsPaused.from = Date.now() + settings.outageSeconds * 1000 - KILL_QUIET_AROUND_RECOVERY_MS;
            killsPaused.to = Number.POSITIVE_INFINITY;
          }
          outageEnded = chaos?.outage(settings.outageSeconds * 1000).then((run) => {
            killsPaused.to = Date.now() + KILL_QUIET_AROUND_RECOVERY_MS;
            Object.assign(outage, {
              from: run.from,
              to: run.to,
              calls: run.callsWhileDown,
              deliveryCalls: run.deliveryCallsWhileDown,
              queuedAtStart: run.queuedAtStart,
            });
            log(
              `SAP up again after ${settings.outageSeconds} s down: ${run.callsWhileDown} calls reached it ` +
                `(${run.deliveryCallsWhileDown} delivery calls)`,
            );
          });
          log(
            `SAP outage: the sandbox down (503 to everything) for ${settings.outageSeconds} s, once its queued faults are taken`,
          );
        }
        if (Date.now() - lastLog >= 10_000) {
          lastLog = Date.now();
          const answered = results.reduce((n, r) => n + r.sends.length, 0);
          log(
            `${planned}/${settings.records} records planned, ${results.length} plans done (${answered} requests), ` +
              `SAP ${sap.registrations.length} registrations, Salesforce ${salesforce.cases.length} cases`,
          );
        }
        await sleep(100);
      }
    })();

    await Promise.all(
      Array.from({ length: settings.concurrency }, async () => {
        for (;;) {
          if (Date.now() > trafficDeadline || options.signal?.aborted) return;
          const plan = workload.next();
          if (!plan) return;
          await service.whenUp();
          const sends = await Promise.all(
            Array.from({ length: plan.copies }, () => sendWithRetries(service, plan, settings.maxTries)),
          );
          results.push({ plan, sends });
          // The outage's and the clients' figures follow live records: a test record never waits for SAP.
          if (!isTestPlan(plan) && sends.some((send) => send.final.status === 200))
            for (const record of plan.records)
              if (!answeredAt.has(record.token)) answeredAt.set(record.token, Date.now());
          if (sends.some((send) => send.final.status === 200)) workload.accepted(plan);
        }
      }),
    );
    trafficDone = true;
    await chaosLoop;
    // The traffic ended within the slow receiver's window: the window ends with it.
    if (slow) {
      slowWindow = await slow.stop();
      slow = undefined;
    }
    // The outage runs its full length even when the traffic ended first.
    await outageEnded;
    options.signal?.throwIfAborted();
    const trafficSeconds = seconds(Date.now() - trafficStarted);
    log(`traffic done in ${trafficSeconds} s: ${results.length} plans`);

    // ---- Quiet period: no more faults; wait until nothing is `accepted` (bounded, or until nothing moves).
    weather.calm();
    chaos.calm();
    sqsProxy.setPolicy(undefined);
    dynamoProxy.setPolicy(undefined);
    deliveryFaults = false;
    const drainStarted = Date.now();
    const drainDeadline = drainStarted + settings.drainSeconds * 1000;
    let drained = false;
    let lastOpen = -1;
    let lastMove = Date.now();
    let lastDownstream = sap.requests.length + salesforce.requests.length;
    let storeReadable = true;
    while (Date.now() < drainDeadline) {
      options.signal?.throwIfAborted();
      await service.whenUp();
      const open = await acceptedInStore(dataDir);
      if (!open) {
        storeReadable = false;
        break;
      }
      if (open.length === 0) {
        drained = true;
        break;
      }
      const downstream = sap.requests.length + salesforce.requests.length;
      if (open.length !== lastOpen || downstream !== lastDownstream) {
        lastOpen = open.length;
        lastDownstream = downstream;
        lastMove = Date.now();
        log(`quiet period: ${open.length} record(s) still accepted`);
      } else if (Date.now() - lastMove > settings.stallSeconds * 1000) {
        log(
          `quiet period: ${open.length} record(s) accepted and nothing moved for ${settings.stallSeconds} s`,
        );
        break;
      }
      await sleep(2000);
    }
    const drainSeconds = seconds(Date.now() - drainStarted);
    log(`quiet period over after ${drainSeconds} s${drained ? ': nothing accepted' : ''}`);

    // ---- Status of every record answered 200, over the GET endpoints.
    const lookupsStarted = Date.now();
    const ids = new Map<string, Operation>();
    const clientOfId = new Map<string, string>();
    for (const { plan, sends } of results) {
      for (const send of sends) {
        for (const answer of send.answers) {
          if (answer.status !== 200) continue;
          for (const [i, id] of (answer.ids ?? []).entries()) {
            ids.set(id, plan.records[i].op);
            clientOfId.set(id, clientOf(plan));
          }
        }
      }
    }
    const statuses = new Map<string, StatusLookup>();
    const lookUp = async (list: [string, Operation][]) =>
      forEachLimited(list, 8, async ([id, op]) => {
        statuses.set(id, await lookUpStatus(service, op, id, clientOfId.get(id)));
      });
    await lookUp([...ids]);
    // Without the store to watch, the look-ups themselves wait for the stragglers.
    while (!storeReadable && Date.now() < drainDeadline) {
      const open = [...ids].filter(([id]) => statuses.get(id)?.status === 'accepted');
      if (open.length === 0) break;
      await sleep(2000);
      await lookUp(open);
    }
    const stillAccepted = await acceptedInStore(dataDir);
    const lookupsSeconds = seconds(Date.now() - lookupsStarted);

    // ---- State-change events at the webhook receiver (bounded wait: the reconciler republishes after 60 s).
    const eventsStarted = Date.now();
    const webhookClients = new Set(
      clientsConfig.clients.filter((client) => client.webhook).map((client) => client.name),
    );
    await service.whenUp();
    const stored = await statusRecordsInStore(dataDir);
    // The store names every settled record, answered or not; without it, the look-ups of the answered ones.
    const expected = stored
      ? settledOf(stored, webhookClients)
      : new Map(
          [...ids]
            .filter(([id]) => webhookClients.has(clientOfId.get(id) ?? ''))
            .map(([id]) => [id, statuses.get(id)?.status ?? '?'] as const)
            .filter(([, status]) => ['delivered', 'rejected', 'failed'].includes(status)),
        );
    const foreign = new Set(
      stored
        ? stored.filter((record) => !webhookClients.has(record.owner)).map((record) => record.id)
        : [...ids].filter(([id]) => !webhookClients.has(clientOfId.get(id) ?? '')).map(([id]) => id),
    );
    const sent = new Map<string, SoakRecord>();
    for (const { plan } of results) for (const record of plan.records) sent.set(record.token, record);
    const personal = personalValueIndex(sent.values());
    let received: ReceivedHook[] = [];
    let receiverRead = false;
    let eventCheck: EventCheck;
    let lastEventsLog = 0;
    let lastMissing = Number.POSITIVE_INFINITY;
    let lastProgress = Date.now();
    for (;;) {
      options.signal?.throwIfAborted();
      await service.whenUp();
      const read = await receivedHooks(dataDir);
      if (read) {
        received = read;
        receiverRead = true;
      }
      const onBus = await deliveriesOnBus(dataDir).catch(() => []);
      eventCheck = checkEvents({ expected, foreign, webhookClients, received, onBus, personal });
      if (eventCheck.missing.size < lastMissing) {
        lastMissing = eventCheck.missing.size;
        lastProgress = Date.now();
      }
      // Wait as long as events keep arriving: each webhook client's events are paced by its rate limit (10 a
      // second by default), so a flood's thousands take minutes; a lost event is one that stops the progress.
      const waitMs = settings.eventsWaitSeconds * 1000;
      if (eventCheck.missing.size === 0 || Date.now() - lastProgress >= waitMs) break;
      if (Date.now() - lastEventsLog >= 10_000) {
        lastEventsLog = Date.now();
        log(
          `events: ${eventCheck.missing.size} of ${expected.size} settled records' events not yet received`,
        );
      }
      await sleep(2000);
    }
    const eventsSeconds = seconds(Date.now() - eventsStarted);
    const eventExamples = eventCheck.examples;
    if (eventCheck.missing.size > 0) {
      eventExamples.eventsLost = receiverRead
        ? await diagnoseMissing(dataDir, eventCheck.missing, received).catch((error) => [
            `diagnosis failed: ${error instanceof Error ? error.message : String(error)}`,
          ])
        : ['the webhook receiver could not be read (runner.json webhookReceiverUrl)'];
    }
    log(
      `events: ${expected.size - eventCheck.missing.size} of ${expected.size} settled records' events received ` +
        `(${received.length} events in all) after ${eventsSeconds} s`,
    );

    // ---- The other clients' webhook delay while the flooding client's receiver was slow (its held-back events are
    // among those the event check above waited for).
    const slowFigures = slowReceiverFigures({
      received,
      slowClient: FLOODING_CLIENT,
      from: (slowWindow?.from ?? 0) + BUS_PAUSE_MS,
      to: slowWindow?.to ?? 0,
    });
    if (!slowWindow) Object.assign(slowFigures, { from: null, to: null });
    log(
      `slow receiver: other clients' webhooks ${slowFigures.p50Seconds ?? '-'} s (p50), ` +
        `${slowFigures.p95Seconds ?? '-'} s (p95), ${slowFigures.maxSeconds ?? '-'} s (max) over ${slowFigures.events} events`,
    );

    // ---- The event feed: every settled record's final state, read page by page by its own client.
    const feedCheck = await feedUntilComplete(
      service,
      clientsConfig.clients.map((client) => client.name),
      new Map(
        (stored ?? [])
          .filter((record) => ['delivered', 'rejected', 'failed'].includes(record.status))
          .map((record) => [record.id, { owner: record.owner, state: record.status }]),
      ),
      new Map((stored ?? []).map((record) => [record.id, record.owner])),
      settings.eventsWaitSeconds * 1000,
    );
    log(
      `feed: ${feedCheck.counts.feedExpected - feedCheck.counts.feedMismatched} of ${feedCheck.counts.feedExpected} ` +
        `settled records listed with their final state (${feedCheck.counts.feedEntries} entries)`,
    );

    // ---- Test mode: the test client's records apart. The ledger's promise (each record at SAP or Salesforce
    // exactly once) is of live records; a test record's is never to be there at all, and to end as its name says.
    const live = liveLedgerInput(results, stillAccepted);
    const liveResults = live.results;
    const testRecords = sentTestRecords(results);
    const deadLettered = (await stopDeadLetterWatch?.()) ?? new Set<string>();
    const testCheck = checkTestMode({
      records: testRecords,
      downstreamRequests: [...sap.requests, ...salesforce.requests],
      deadLettered,
      statuses,
      maxAttempts: DELIVERY_MAX_ATTEMPTS,
    });
    log(
      `test mode: ${testCheck.counts.testAsNamed} of ${testCheck.counts.testRecords} test records as their names ` +
        `say, ${testCheck.counts.testAtDownstream} request(s) of them at SAP or Salesforce, ` +
        `${testCheck.counts.testDeadLettered} dead-lettered (${deadLettered.size} dead letters seen in all)`,
    );

    const sapCalls = sapCallsOf(sap.requests, sapTimes, sap.servicePath, sap.registrations);
    const salesforceCalls = salesforceCallsOf(
      salesforce.requests,
      sfTimes,
      salesforce.cases,
      salesforce.externalIdField,
    );
    const { counts, outcomes } = reconcile({ ...live, sapCalls, salesforceCalls, kills, statuses });
    // When each request reached SAP while it was down (seconds into the outage): where the calls fell.
    const downAt = sapTimes
      .filter((at) => outage.from > 0 && at >= outage.from && at <= outage.to)
      .map((at) => Math.round((at - outage.from) / 100) / 10);
    const outageReport = outageFigures({
      ...outage,
      callSeconds: downAt,
      seconds: outage.from ? settings.outageSeconds : 0,
      probeSeconds: settings.probeSeconds,
      afterFailures: OUTAGE_AFTER_FAILURES,
      inFlight: ERP_MAX_CONCURRENCY,
      answeredAt,
      outcomes,
    });
    const calls = deliveryCallFigures(
      sapDeliveryCalls(sap.requests, sap.servicePath),
      salesforceDeliveryCalls(salesforce.requests),
    );
    await stopHoldPolls?.();
    const during = (at: number | undefined) =>
      at !== undefined && outage.from > 0 && at >= outage.from && at <= outage.to;
    const salesDuringOutage = { alone: 0, together: 0 };
    for (const { plan } of liveResults) {
      if (plan.op !== 'sale' || plan.fresh === 0) continue;
      if (!during(answeredAt.get(plan.records[0]?.token ?? ''))) continue;
      if (plan.records.length > 1) salesDuringOutage.together++;
      else salesDuringOutage.alone++;
    }
    // Which call opened each hold, from the records' histories (read while npm start still serves the store).
    await service.whenUp();
    const openings = holdWatch.openings();
    const openingCalls = (await openingCallsInStore(dataDir, openings)) ?? new Map();
    const holdReport = holdFigures({
      outage,
      createdAt: sap.registrations.map((registration) => Date.parse(registration.createdAt)),
      sapCalls: sap.requests.flatMap((request, i) =>
        request.method === 'POST' ? [{ at: sapTimes[i] ?? 0, status: request.status }] : [],
      ),
      sapRequestTimes: sapTimes,
      waiting: outageReport.acceptedDuring,
      probeSeconds: settings.probeSeconds,
      reconcileSeconds: settings.reconcileIntervalSeconds,
      batchingWindowSeconds: await erpBatchingWindowSeconds(),
      openings,
      openingCalls,
    });
    if (outage.queuedAtStart > 0)
      log(
        `${outage.queuedAtStart} SAP fault(s) still queued as the outage began: its recovery may meet them`,
      );
    // The last reading of the store: its indexes against its items, with npm start stopped (nothing moves).
    await service.stop();
    const indexes = await indexAgreement(dataDir).catch(
      (error: unknown): IndexAgreement => ({
        items: 0,
        extra: 0,
        missing: 0,
        wrong: 0,
        unreadable: error instanceof Error ? error.message : String(error),
      }),
    );
    // Every delivered record's trace, from the spans kept until npm start stopped (its exports all written).
    const traces = stored
      ? traceWhole({
          records: stored,
          spans: await readKeptSpans(tracesFile(dataDir)),
          kills,
          callerSpanIds: new Set(results.flatMap(({ plan }) => callerTraceparent(plan)?.split('-')[2] ?? [])),
          timedOut: intakeTimeouts(results, stored),
        })
      : null;
    log(
      traces
        ? `traces: ${traces.records} delivered records checked over ${traces.spans} spans: ` +
            `${traces.withoutIntakeSpan} without intake span, ${traces.withoutDeliverySpan} without delivery span, ` +
            `${traces.orphanSpans} orphan spans (excused by a SIGKILL: ${traces.excusedByKill.intakeSpans} intake, ` +
            `${traces.excusedByKill.deliverySpans} delivery, ${traces.excusedByKill.orphanSpans} orphans)`
        : 'traces: the store could not be read, no verdict',
    );
    const stats = service.stats();
    const report: SoakReport = {
      ok:
        promiseKept(counts) &&
        eventsKept(eventCheck.counts) &&
        feedKept(feedCheck.counts) &&
        outageReport.kept &&
        (options.timeGoals === false ? holdReport.openedWhileAnswering === 0 : holdReport.kept) &&
        testModeKept(testCheck.counts) &&
        slowFigures.kept &&
        indexesAgree(indexes) &&
        traces?.kept === true,
      outage: outageReport,
      hold: { ...holdReport, salesDuringOutage },
      calls,
      seed,
      run,
      settings,
      ...counts,
      examples: {
        ...counts.examples,
        ...eventExamples,
        ...(feedCheck.examples.length > 0 ? { feed: feedCheck.examples } : {}),
        ...testCheck.examples,
      },
      testMode: testCheck.counts,
      slowReceiver: slowFigures,
      indexes,
      traces,
      events: eventCheck.counts,
      feed: feedCheck.counts,
      clients: deliveryTimesByClient({
        results: liveResults,
        answeredAt,
        calls: [...sapCalls, ...salesforceCalls],
      }),
      restarts: {
        kills: stats.kills,
        starts: stats.starts,
        unexpectedExits: stats.unexpectedExits,
        startSeconds: stats.startMs.map(seconds),
      },
      faults: {
        intakeSqs: { calls: sqsProxy.counts().calls, ...sqsProxy.counts().faults },
        intakeDynamodb: { calls: dynamoProxy.counts().calls, ...dynamoProxy.counts().faults },
        intakeStorms: weather.storms(),
        deliverySqs: proxyCounts(deliveryProxies.sqs),
        deliveryDynamodb: proxyCounts(deliveryProxies.dynamodb),
        deliveryEventBridge: proxyCounts(deliveryProxies.eventbridge),
        downstream: chaos.counts(),
      },
      seconds: {
        traffic: trafficSeconds,
        drain: drainSeconds,
        lookups: lookupsSeconds,
        events: eventsSeconds,
        total: seconds(Date.now() - startedAt),
      },
      drained,
    };
    if (!report.ok) keepData = true;
    if (keepData) report.dataDir = dataDir;
    return report;
  } finally {
    weather.calm();
    chaos?.calm();
    await stopHoldPolls?.();
    await stopDeadLetterWatch?.();
    await slow?.stop();
    await service.stop().catch(() => {});
    await Promise.all([
      sqsProxy.stop(),
      dynamoProxy.stop(),
      ...Object.values(deliveryProxies).map((proxy) => proxy.stop()),
      sap.stop(),
      salesforce.stop(),
    ]);
    serviceLog.end();
    // A red run's store and the service's lines stay for reading (the report names the directory).
    if (!keepData) await rm(dataDir, { recursive: true, force: true }).catch(() => {});
    log(`done in ${seconds(Date.now() - startedAt)} s`);
  }
};
