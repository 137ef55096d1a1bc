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
 *   seconds; and one SAP outage (the sandbox's own switch) many times longer than a record's attempts take.
 */

import type { OutageState } from '../sandbox/outage.ts';
import type { SalesforceFault, SalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import type { SapFault, SapSandbox } from '../sandbox/sapSandbox.ts';
import type { FaultPolicy, ProxyFault } from '../testkit/faultProxy.ts';

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

/** Past the downstream clients' 10 s timeout (CONTRACT 3): the request is carried out, its answer comes too late. */
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
}

/**
 * Starts queueing faults into the sandboxes, in proportion to the deliveries they receive (checked every 250 ms).
 * `outage(ms)`: SAP answers 503 to every delivery for that long.
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

  /** Delivery calls among the requests since `from`: single ones (`single`) and batched ones (`batched`). */
  const deliveries = (requests: { method: string; path: string }[], from: number, method: string) => {
    const n = { single: 0, batched: 0 };
    for (let i = from; i < requests.length; i++) {
      if (requests[i].method !== method) continue;
      if (/\/\$batch(\?|$)|\/composite\/sobjects\//.test(requests[i].path)) n.batched++;
      else if (method === 'PATCH' || !/\/oauth2\//.test(requests[i].path)) n.single++;
    }
    return n;
  };

  // Faults wait in the sandboxes until a delivery of their kind takes them: keep count, so that none pile up (a
  // long queue of them would outlast the campaign's fault period).
  const pending = { sap: 0, sapBatch: 0, sf: 0, sfBatch: 0 };
  let sapAtExpiry = sap.requests.length;
  let sfAtExpiry = salesforce.requests.length;
  const tick = setInterval(() => {
    if (!running) return;
    const sapNew = deliveries(sap.requests, sapSeen, 'POST');
    const sfNew = deliveries(salesforce.requests, sfSeen, 'PATCH');
    sapSeen = sap.requests.length;
    sfSeen = salesforce.requests.length;
    pending.sap = Math.max(0, pending.sap - sapNew.single);
    pending.sapBatch = Math.max(0, pending.sapBatch - sapNew.batched);
    pending.sf = Math.max(0, pending.sf - sfNew.single);
    pending.sfBatch = Math.max(0, pending.sfBatch - sfNew.batched);
    if (!sap.outage.isDown()) {
      for (let i = 0; i < sapNew.single; i++) {
        if (pending.sap < 3 && Math.random() < share) {
          const fault = sapTransient();
          sap.inject(fault);
          pending.sap++;
          count(`sap ${faultName(fault)}`);
        }
      }
      for (let i = 0; i < sapNew.batched; i++) {
        if (pending.sapBatch < 2 && Math.random() < batchShare) {
          const fault = sapBatchFault();
          sap.inject(fault);
          pending.sapBatch++;
          count(`sap ${faultName(fault)}`);
        }
      }
    }
    for (let i = 0; i < sfNew.single; i++) {
      if (pending.sf >= 3) break;
      if (Math.random() < permanentShare) {
        salesforce.inject({ status: 400 });
        pending.sf++;
        count('salesforce 400 INVALID_INPUT (permanent)');
      } else if (Math.random() < share) {
        const fault = salesforceTransient();
        salesforce.inject(fault);
        pending.sf++;
        count(`salesforce ${faultName(fault)}`);
      }
    }
    for (let i = 0; i < sfNew.batched; i++) {
      if (pending.sfBatch < 2 && Math.random() < batchShare) {
        const fault = salesforceCollectionsFault();
        salesforce.inject(fault);
        pending.sfBatch++;
        count(`salesforce ${faultName(fault)}`);
      }
    }
  }, 250);
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
    const sapDelivered = deliveries(sap.requests, sapAtExpiry, 'POST');
    const sfDelivered = deliveries(salesforce.requests, sfAtExpiry, 'PATCH');
    const sapCalls = sapDelivered.single + sapDelivered.batched;
    const sfCalls = sfDelivered.single + sfDelivered.batched;
    sapAtExpiry = sap.requests.length;
    sfAtExpiry = salesforce.requests.length;
    if (Math.random() < Math.min(0.3, share * sapCalls)) {
      const fault: SapFault =
        Math.random() < 0.5 ? { on: 'csrf', status: 503 } : { on: 'csrf', dropConnection: true };
      sap.inject(fault);
      count(`sap ${faultName(fault)}`);
    }
    if (Math.random() < Math.min(0.3, share * sfCalls)) {
      const fault: SalesforceFault =
        Math.random() < 0.5 ? { on: 'token', status: 500 } : { on: 'token', dropConnection: true };
      salesforce.inject(fault);
      count(`salesforce ${faultName(fault)}`);
    }
  }, options.expireEveryMs ?? 6_000);

  let outageTimer: NodeJS.Timeout | undefined;
  return {
    /**
     * SAP down for `ms` (the sandbox's own switch: every request answered 503 and counted); resolves once it is
     * up again with what reached it meanwhile.
     */
    outage(ms: number): Promise<OutageState> {
      sap.outage.setDown(true);
      count('sap outages');
      return new Promise((resolve) => {
        outageTimer = setTimeout(() => {
          const state = sap.outage.state();
          sap.outage.setDown(false);
          resolve(state);
        }, ms);
      });
    },
    counts: () => ({ ...counts }),
    /** No more faults (those already queued are still used up by the next deliveries); SAP up again. */
    calm() {
      running = false;
      clearInterval(tick);
      clearInterval(expiry);
      if (outageTimer) clearTimeout(outageTimer);
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
