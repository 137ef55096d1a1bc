/**
 * The soak's faults at every boundary:
 *
 * - intake: a policy for the fault proxies between the API handlers and SQS / DynamoDB: a share of calls gets a
 *   5xx, added latency, no answer (held past the AWS client's 2 s attempt timeout), an answer lost after the call
 *   took effect (cut, or held too long), or a refused SendMessageBatch entry; now and then a storm of 5xx on one
 *   of them for a few seconds;
 * - delivery: the same kinds of fault between the worker, the reconciler and their event publishing and SQS,
 *   DynamoDB and the bus (deliveryPolicy), and refused PutEvents entries;
 * - downstream: faults queued into the SAP and Salesforce sandboxes in proportion to the deliveries they receive
 *   (5xx, dropped connections, slow answers, requests carried out whose answer is lost (connection reset, or
 *   answered after the client's timeout), 401 / 403 REQUEST_LIMIT_EXCEEDED / 400 UNABLE_TO_LOCK_ROW, token and
 *   CSRF fetch failures, a few permanent refusals); in batched calls ($batch, Collections) whole-call failures,
 *   lost answers and one record's refusal (transient or for good); CSRF and OAuth tokens expired every few
 *   seconds; and one SAP outage (the sandbox's own switch) many times longer than a record's attempts take, which
 *   begins once SAP's queued faults are taken and ends with none queued (its recovery is the service's own);
 * - faults that fail a whole call are spaced: the downstream answers between any two (faultQueue.ts);
 * - bursts of Collections answers with some cases upserted and the others `UNABLE_TO_LOCK_ROW` (Salesforce up and
 *   answering, rows locked by another integration's bulk load), nothing else failing at Salesforce meanwhile.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { OutageState } from '../sandbox/outage.ts';
import type { SalesforceFault, SalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import type { SapFault, SapSandbox } from '../sandbox/sapSandbox.ts';
import type { LoggedRequest } from '../sandbox/server.ts';
import type { FaultPolicy, ProxyFault } from '../testkit/faultProxy.ts';
import { type CallKind, createFaultQueue } from './faultQueue.ts';

export interface IntakeRates {
  error: number;
  delay: number;
  hang: number;
  loseAnswer: number;
  lateAnswer: number;
  /** SendMessageBatch only. */
  refuseEntry: number;
}

export const calmIntake: IntakeRates = {
  error: 0.02,
  delay: 0.02,
  hang: 0.003,
  loseAnswer: 0.007,
  lateAnswer: 0.003,
  refuseEntry: 0.01,
};
const stormIntake: IntakeRates = { ...calmIntake, error: 0.6 };
const noFaults: IntakeRates = { error: 0, delay: 0, hang: 0, loseAnswer: 0, lateAnswer: 0, refuseEntry: 0 };

/** Past the JSON-protocol client's 2 s attempt timeout of the API handlers. */
const pastClientTimeoutMs = 2_500;

const between = (min: number, max: number) => Math.round(min + Math.random() * (max - min));

/** A policy drawing from `rates()` for each call (rates are read per call, so storms take effect at once). */
export const intakePolicy =
  (rates: () => IntakeRates): FaultPolicy =>
  (operation): ProxyFault | undefined => {
    const r = rates();
    let roll = Math.random();
    const take = (share: number) => {
      roll -= share;
      return roll < 0;
    };
    if (take(r.error)) return { kind: 'error', status: Math.random() < 0.7 ? 500 : 503 };
    if (take(r.delay)) return { kind: 'delay', ms: between(50, 600) };
    if (take(r.hang)) return { kind: 'hang', ms: pastClientTimeoutMs };
    if (take(r.loseAnswer)) return { kind: 'loseAnswer' };
    if (take(r.lateAnswer)) return { kind: 'lateAnswer', ms: pastClientTimeoutMs };
    if (operation === 'SendMessageBatch' && take(r.refuseEntry)) return { kind: 'refuseEntry' };
    return undefined;
  };

/** The services the worker, the reconciler and their event publishing call (through LOCAL_DELIVERY_PROXY_*). */
export type DeliveryService = 'sqs' | 'dynamodb' | 'eventbridge';

/**
 * How long a call is held to count as no answer: past the attempt timeout of the caller's client (lib/aws/clients.ts:
 * DynamoDB 5 s, EventBridge and SQS 2 s).
 */
const pastDeliveryTimeoutMs: Record<DeliveryService, number> = {
  sqs: 2_500,
  dynamodb: 5_500,
  eventbridge: 2_500,
};

/**
 * A policy for the fault proxies between the worker / reconciler and SQS, DynamoDB and the bus: the intake's calm
 * rates (5xx, added latency, no answer, answers lost after the call took effect, refused SendMessageBatch and
 * PutEvents entries), holding past that service's client timeout; none while `active()` is false (the campaign
 * keeps `npm start`'s own start-up, and the quiet period, free of them).
 *
 * @example
 * startFaultProxy({ upstream, policy: deliveryPolicy('dynamodb', () => service.isUp()) });
 */
export const deliveryPolicy = (service: DeliveryService, active: () => boolean): FaultPolicy => {
  const draw = intakePolicy(() => (active() ? calmIntake : noFaults));
  const heldMs = pastDeliveryTimeoutMs[service];
  return (operation) => {
    const fault = draw(operation);
    if (fault?.kind === 'hang' || fault?.kind === 'lateAnswer') return { ...fault, ms: heldMs };
    if (fault?.kind === 'refuseEntry' || operation !== 'PutEvents') return fault;
    return (
      fault ?? (active() && Math.random() < calmIntake.refuseEntry ? { kind: 'refuseEntry' } : undefined)
    );
  };
};

/** Intake fault rates over time: calm, a storm on one service every `everyMs`, or none at all. */
export const createIntakeWeather = (everyMs = 20_000, stormMs = 3_000) => {
  let enabled = true;
  let storm: { service: 'sqs' | 'dynamodb'; until: number } | undefined;
  let storms = 0;
  let next: 'sqs' | 'dynamodb' = 'sqs';
  const timer = setInterval(() => {
    if (!enabled) return;
    storm = { service: next, until: Date.now() + stormMs };
    storms++;
    next = next === 'sqs' ? 'dynamodb' : 'sqs';
  }, everyMs);
  timer.unref();
  const ratesFor = (service: 'sqs' | 'dynamodb') => (): IntakeRates => {
    if (!enabled) return noFaults;
    return storm && storm.service === service && Date.now() < storm.until ? stormIntake : calmIntake;
  };
  return {
    sqs: ratesFor('sqs'),
    dynamodb: ratesFor('dynamodb'),
    storms: () => storms,
    /** No more faults (the quiet period). */
    calm() {
      enabled = false;
      clearInterval(timer);
    },
  };
};

/** Past the downstream clients' 10 s timeout (docs/behaviour.md#delivery-and-retries): the request is carried out, its answer comes too late. */
const pastDownstreamTimeoutMs = 10_500;

const sapTransient = (): SapFault =>
  [
    { status: 503 },
    { status: 503 },
    { status: 500 },
    { dropConnection: true },
    { dropConnection: true },
    { delayMs: between(300, 2500) },
    { status: 401 },
    // Carried out, answer lost: the record is sent again and SAP answers 409 naming its RegistrationId.
    { loseAnswer: true },
    { loseAnswer: true },
    { delayMs: pastDownstreamTimeoutMs },
  ][between(0, 9)];

const salesforceTransient = (): SalesforceFault =>
  [
    { status: 503 },
    { status: 500 },
    { status: 403 },
    {
      status: 400,
      errors: [
        {
          message: 'unable to obtain exclusive access to this record',
          errorCode: 'UNABLE_TO_LOCK_ROW',
          fields: [],
        },
      ],
    },
    { dropConnection: true },
    { dropConnection: true },
    { delayMs: between(300, 2500) },
    // Carried out, answer lost: the case is upserted again, by its external id.
    { loseAnswer: true },
    { loseAnswer: true },
    { delayMs: pastDownstreamTimeoutMs },
  ][between(0, 9)];

/**
 * Faults of a whole `$batch` call or one change set in it: whole-call 503 / 401, a dropped connection, a call
 * carried out whose answer is lost (`dropAnswer`: every registration in it is sent again and answered 409 naming
 * its RegistrationId), or one registration refused for good inside an otherwise good call.
 */
const sapBatchFault = (): SapFault =>
  [
    { on: 'batch', status: 503 },
    { on: 'batch', status: 503 },
    { on: 'batch', status: 401 },
    { on: 'batch', dropConnection: true },
    { on: 'batch', dropAnswer: true },
    { on: 'batch', dropAnswer: true },
    { on: 'batch', recordErrors: { 0: { status: 400, message: 'Dealer not authorised for this model' } } },
  ][between(0, 6)] as SapFault;

const lockRow = {
  message: 'unable to obtain exclusive access to this record',
  errorCode: 'UNABLE_TO_LOCK_ROW',
  fields: [],
};

/**
 * Faults of a whole Collections call or one record in it: whole-call 503 / 500 / 403 REQUEST_LIMIT_EXCEEDED, a
 * dropped connection, a call carried out whose answer is lost (`dropAnswer`), one record's `UNABLE_TO_LOCK_ROW`
 * (transient: tried again), or one record refused for good (`INVALID_EMAIL_ADDRESS`: `rejected`).
 */
const salesforceCollectionsFault = (): SalesforceFault =>
  [
    { on: 'collections', status: 503 },
    { on: 'collections', status: 500 },
    { on: 'collections', status: 403 },
    { on: 'collections', dropConnection: true },
    { on: 'collections', dropAnswer: true },
    { on: 'collections', dropAnswer: true },
    { on: 'collections', recordErrors: { 0: [lockRow] } },
    {
      on: 'collections',
      recordErrors: {
        1: [
          {
            message: 'Email: invalid email address',
            errorCode: 'INVALID_EMAIL_ADDRESS',
            fields: ['SuppliedEmail'],
          },
        ],
      },
    },
  ][between(0, 7)] as SalesforceFault;

export interface DownstreamChaosOptions {
  sap: SapSandbox;
  salesforce: SalesforceSandbox;
  /** Share of deliveries that meet a transient fault. Default 0.06. */
  share?: number;
  /** Share of case deliveries refused for good (400 INVALID_INPUT → rejected). Default 0.004. */
  permanentShare?: number;
  /** Share of batched calls ($batch, Collections) that meet a fault, whole-call or one record's. Default 0.15. */
  batchShare?: number;
  /** Every how long CSRF and OAuth tokens expire. Default 6 s. */
  expireEveryMs?: number;
  /** Every how long a burst of UNABLE_TO_LOCK_ROW begins at Salesforce (0: never). Default 30 s. */
  lockBurstEveryMs?: number;
  /** Collections calls a burst answers in part (some cases upserted, the others UNABLE_TO_LOCK_ROW). Default 3. */
  lockBurstCalls?: number;
}

/** The requests of a SAP sandbox's log a queued fault waits for. */
const sapCallKind = (request: LoggedRequest): CallKind | undefined => {
  if (request.method === 'POST') return /\/\$batch(\?|$)/.test(request.path) ? 'batched' : 'single';
  const fetch = String(request.headers['x-csrf-token'] ?? '').toLowerCase() === 'fetch';
  return request.method === 'GET' && fetch ? 'fetch' : undefined;
};

/** The requests of a Salesforce sandbox's log a queued fault waits for. */
const salesforceCallKind = (request: LoggedRequest): CallKind | undefined => {
  if (request.method === 'PATCH') return /\/composite\/sobjects\//.test(request.path) ? 'batched' : 'single';
  return request.method === 'POST' && /\/oauth2\//.test(request.path) ? 'fetch' : undefined;
};

/**
 * Whether a fault fails the whole call (every record in it: the downstream did not answer), as opposed to an
 * answer: a slow one, a refusal for good, or records refused one by one inside an answered batched call.
 */
const failsWholeCall = (fault: SapFault | SalesforceFault): boolean => {
  if (fault.recordErrors) return false;
  if (fault.status === 400) return (fault as SalesforceFault).errors?.[0]?.errorCode === 'UNABLE_TO_LOCK_ROW';
  return (
    fault.status !== undefined ||
    Boolean(fault.dropConnection || fault.dropAnswer || fault.loseAnswer) ||
    (fault.delayMs ?? 0) >= pastDownstreamTimeoutMs
  );
};

/**
 * How a burst answers a Collections call, by position (the sandbox ignores those past the call's end): `a run`
 * locks 3 to 6 cases in a row from one of the first positions (a streak as long as OUTAGE_AFTER_FAILURES, right
 * after an upserted case), `scattered` about a third of them. The first case is never locked and a call carries
 * at least two (a lone case goes by the single upsert), so every call is answered in part: some cases upserted,
 * the others locked, which a hold must take for answers (docs/behaviour.md#outages-and-holds). Only some of a call are locked, so a case
 * rarely meets a lock at every try (locking nearly all, the first runs left cases `failed` after five locks).
 */
const lockedInPart = (pattern: 'a run' | 'scattered'): SalesforceFault => {
  const start = 1 + Math.floor(Math.random() * 8);
  const end = start + 3 + Math.floor(Math.random() * 4);
  const locked = (position: number) =>
    pattern === 'a run' ? position >= start && position < end : position > 0 && Math.random() < 0.3;
  return {
    on: 'collections',
    recordErrors: Object.fromEntries(
      Array.from({ length: 200 }, (_, position) => position)
        .filter(locked)
        .map((position) => [position, [lockRow]]),
    ),
  };
};

/** The longest a burst waits for its Collections calls: other Salesforce faults wait while it lasts. */
const lockBurstMaxMs = 15_000;

/** After SAP comes back, its faults wait for its first stored registration, at most this long. */
const recoveryQuietMaxMs = 60_000;

/** The longest an outage waits for SAP's queued faults to be taken before it begins. */
const outageQueueWaitMs = 15_000;

/** The SAP outage as it happened: when, what reached SAP meanwhile, faults still queued as it began. */
export interface OutageRun extends OutageState {
  from: number;
  to: number;
  /** SAP faults still waiting in the sandbox as it went down (0 expected: the first call after it takes them). */
  queuedAtStart: number;
}

/**
 * Starts queueing faults into the sandboxes, in proportion to the deliveries they receive (checked every 250 ms),
 * whole-call failures spaced (faultQueue.ts), and bursts of Collections answers with cases locked in part.
 * `outage(ms)`: SAP answers 503 to every delivery for that long; no fault of the campaign's waits for its first
 * calls after it (the time to the first delivery after it is the service's own: holdFigures.ts).
 */
export const startDownstreamChaos = (options: DownstreamChaosOptions) => {
  const { sap, salesforce } = options;
  const share = options.share ?? 0.06;
  const permanentShare = options.permanentShare ?? 0.004;
  const batchShare = options.batchShare ?? 0.15;
  const counts: Record<string, number> = {};
  const count = (name: string, n = 1) => {
    counts[name] = (counts[name] ?? 0) + n;
  };
  let sapSeen = sap.requests.length;
  let sfSeen = salesforce.requests.length;
  let running = true;
  const sapQueue = createFaultQueue();
  const sfQueue = createFaultQueue();
  /** No new SAP fault: the outage waits for the queued ones to be taken, and the recovery meets none. */
  let sapQuiet = false;
  let recovering: { since: number; registrations: number } | undefined;
  const lockBurst = { left: 0, until: 0, calls: 0 };

  /** The kinds of the requests since `from`, in order. */
  const callsSince = (
    requests: LoggedRequest[],
    from: number,
    kindOf: (request: LoggedRequest) => CallKind | undefined,
  ) => {
    const kinds: CallKind[] = [];
    for (let i = from; i < requests.length; i++) {
      const kind = kindOf(requests[i]);
      if (kind) kinds.push(kind);
    }
    return kinds;
  };
  /** Queues `fault` in a sandbox unless it fails a whole call while the last such one is too recent. */
  const plant = (
    downstream: 'sap' | 'salesforce',
    kind: CallKind,
    fault: SapFault | SalesforceFault,
    label = faultName(fault),
  ): boolean => {
    const queue = downstream === 'sap' ? sapQueue : sfQueue;
    const fails = failsWholeCall(fault);
    if (fails && !queue.mayFailCall()) {
      count(`${downstream} whole-call failures left out (spaced)`);
      return false;
    }
    if (downstream === 'sap') sap.inject(fault as SapFault);
    else salesforce.inject(fault as SalesforceFault);
    queue.planted(kind, fails);
    count(`${downstream} ${label}`);
    return true;
  };
  const sapActive = () => !sapQuiet && !sap.outage.isDown();
  // While a burst lasts, Salesforce fails nothing else: it is up and answering, some cases locked.
  const burstOn = () => lockBurst.left > 0 && Date.now() < lockBurst.until;

  const tick = setInterval(() => {
    if (!running) return;
    const sapNew = callsSince(sap.requests, sapSeen, sapCallKind);
    const sfNew = callsSince(salesforce.requests, sfSeen, salesforceCallKind);
    sapSeen = sap.requests.length;
    sfSeen = salesforce.requests.length;
    for (const kind of sapNew) sapQueue.observe(kind);
    for (const kind of sfNew) sfQueue.observe(kind);
    if (
      recovering &&
      (sap.registrations.length > recovering.registrations ||
        Date.now() - recovering.since > recoveryQuietMaxMs)
    ) {
      recovering = undefined;
      sapQuiet = false;
    }
    if (sapActive()) {
      for (const kind of sapNew) {
        if (kind === 'single' && sapQueue.waiting('single') < 3 && Math.random() < share)
          plant('sap', 'single', sapTransient());
        if (kind === 'batched' && sapQueue.waiting('batched') < 2 && Math.random() < batchShare)
          plant('sap', 'batched', sapBatchFault());
      }
    }
    if (burstOn()) {
      if (sfQueue.waiting('batched') === 0) {
        const pattern = lockBurst.calls % 2 === 0 ? 'a run' : 'scattered';
        const name = `collections answered in part, UNABLE_TO_LOCK_ROW ${pattern}`;
        if (plant('salesforce', 'batched', lockedInPart(pattern), name)) {
          lockBurst.left--;
          lockBurst.calls++;
        }
      }
      return;
    }
    for (const kind of sfNew) {
      if (kind === 'single' && sfQueue.waiting('single') < 3) {
        if (Math.random() < permanentShare) {
          salesforce.inject({ status: 400 });
          sfQueue.planted('single', false);
          count('salesforce 400 INVALID_INPUT (permanent)');
        } else if (Math.random() < share) plant('salesforce', 'single', salesforceTransient());
      }
      if (kind === 'batched' && sfQueue.waiting('batched') < 2 && Math.random() < batchShare)
        plant('salesforce', 'batched', salesforceCollectionsFault());
    }
  }, 250);

  const burstTimer =
    (options.lockBurstEveryMs ?? 30_000) > 0
      ? setInterval(() => {
          if (!running || burstOn()) return;
          lockBurst.left = options.lockBurstCalls ?? 3;
          lockBurst.until = Date.now() + lockBurstMaxMs;
          count('salesforce UNABLE_TO_LOCK_ROW bursts');
        }, options.lockBurstEveryMs ?? 30_000)
      : undefined;

  let sapAtExpiry = sap.requests.length;
  let sfAtExpiry = salesforce.requests.length;
  const expiry = setInterval(() => {
    if (!running) return;
    sap.expireCsrfTokens();
    salesforce.expireTokens();
    count('sap CSRF tokens expired');
    count('salesforce OAuth tokens expired');
    // Now and then the new token's fetch fails too (taken by the next fetch, which the expiry brings soon), as
    // often as `share` of the delivery calls since the last expiry, at most 30 %: a failed fetch fails the
    // whole call, and with batching there are few calls (run of 2026-11-27: 13 of 38 SAP calls failed at a
    // flat 30 %, so a sale met a whole-call failure in one call of three and some spent all five tries).
    const deliveryCalls = (kinds: CallKind[]) => kinds.filter((kind) => kind !== 'fetch').length;
    const sapCalls = deliveryCalls(callsSince(sap.requests, sapAtExpiry, sapCallKind));
    const sfCalls = deliveryCalls(callsSince(salesforce.requests, sfAtExpiry, salesforceCallKind));
    sapAtExpiry = sap.requests.length;
    sfAtExpiry = salesforce.requests.length;
    if (sapActive() && Math.random() < Math.min(0.3, share * sapCalls)) {
      plant(
        'sap',
        'fetch',
        Math.random() < 0.5 ? { on: 'csrf', status: 503 } : { on: 'csrf', dropConnection: true },
      );
    }
    if (!burstOn() && Math.random() < Math.min(0.3, share * sfCalls)) {
      plant(
        'salesforce',
        'fetch',
        Math.random() < 0.5 ? { on: 'token', status: 500 } : { on: 'token', dropConnection: true },
      );
    }
  }, options.expireEveryMs ?? 6_000);

  let endOutage: (() => void) | undefined;
  return {
    /**
     * SAP down for `ms` (the sandbox's own switch: every request answered 503 and counted), once the SAP faults
     * queued before it have been taken (at most 15 s); resolves once it is up again with when and what reached
     * it meanwhile. Its faults resume once it has stored a registration after it (at most 60 s).
     */
    async outage(ms: number): Promise<OutageRun> {
      sapQuiet = true;
      const waitUntil = Date.now() + outageQueueWaitMs;
      while (running && sapQueue.waiting() > 0 && Date.now() < waitUntil) await sleep(250);
      const queuedAtStart = sapQueue.waiting();
      sap.outage.setDown(true);
      const from = Date.now();
      count('sap outages');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        endOutage = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const state = sap.outage.state();
      sap.outage.setDown(false);
      const to = Date.now();
      recovering = { since: to, registrations: sap.registrations.length };
      return { ...state, from, to, queuedAtStart };
    },
    counts: () => ({ ...counts }),
    /** No more faults (those already queued are still used up by the next deliveries); SAP up again. */
    calm() {
      running = false;
      clearInterval(tick);
      clearInterval(expiry);
      if (burstTimer) clearInterval(burstTimer);
      endOutage?.();
      sap.outage.setDown(false);
    },
  };
};

const faultName = (fault: SapFault | SalesforceFault): string => {
  const on = fault.on ? `${fault.on} ` : '';
  if (fault.dropAnswer) return `${on}answer lost after processing (dropAnswer)`;
  if (fault.recordErrors) {
    const [position, error] = Object.entries(fault.recordErrors)[0] ?? [];
    const code = Array.isArray(error) ? error[0]?.errorCode : error?.status;
    return `${on}record ${position} refused (${code})`;
  }
  if (fault.dropConnection) return `${on}dropped connection`;
  if (fault.loseAnswer) return `${on}answer lost after processing (reset)`;
  if (fault.delayMs && fault.delayMs >= pastDownstreamTimeoutMs)
    return `${on}answer lost after processing (timeout)`;
  if (fault.delayMs) return `${on}slow answer`;
  const code = (fault as SalesforceFault).errors?.[0]?.errorCode;
  return `${on}${fault.status}${code ? ` ${code}` : ''}`;
};
