/**
 * A flapping SAP (lib/outage failure rate, lib/delivery give-backs), on the real stand-ins: records accepted by the
 * sales handler, their messages from fauxqs, the store in dynalite, SAP as the sandbox (an HTTP server) failing a
 * random 30 to 70 % of its delivery calls whole (503) for hours, and two worker instances taking turns with what is
 * due. The clock is the workers' (moved 15 s a step); records arrive steadily until the poison has settled (a poison
 * left alone at a quiet hour holds SAP as an outage would: docs/behaviour.md); calls of three
 * registrations (ERP_BATCH_SIZE 3), batches of up to ten messages, the service's defaults otherwise
 * (DELIVERY_MAX_ATTEMPTS 5, OUTAGE_AFTER_FAILURES 5, OUTAGE_FAILURE_RATE 0.5 of OUTAGE_RATE_WINDOW 20).
 *
 * SAP has been flapping for a while when the run begins: the hold has counted OUTAGE_RATE_WINDOW earlier calls
 * (drawn at the same rate), so the workers know its failure rate from the first call of the run (on a hold item that
 * never counted a window, a record failing alone spends its try as before: docs/design.md).
 *
 * Among the records one is poison: SAP refuses it with a 503 of its own every time (its single POST, and its change
 * set in a `$batch` while the others' are created).
 *
 * Invariants: every record but the poison ends `delivered`, registered at SAP exactly once; none ends `failed`;
 * the poison ends `failed` after DELIVERY_MAX_ATTEMPTS tries, never registered.
 * Control: with the failure-rate rule out of reach (a window longer than the run), records end `failed`.
 */
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverMessages } from '../../lib/delivery/deliverBatch.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import type { DeliverySettings, OutageSettings } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { acceptSales, forgetHolds, receive } from '../delivery/support.ts';

const DELIVERY: DeliverySettings = { maxAttempts: 5, retryBaseSeconds: 30, leaseSeconds: 90 };
const OUTAGE: OutageSettings = {
  afterFailures: 5,
  probeSeconds: 30,
  failureRate: 0.5,
  rateWindow: 20,
  apiUsageShare: 0.8,
  cacheSeconds: 0,
};
const RUNS = Number(process.env.FAILURE_RATE_RUNS ?? 4);
const CONTROL_RUNS = 40;
const STEP_SECONDS = 15;
/** Simulated time a run may take before a record still `accepted` counts as never settled. */
const RUN_LIMIT_SECONDS = 8 * 3600;
const SQS_BATCH = 10;
/** Records accepted for a run; those that have not arrived when traffic stops take no part. */
const POOL = 150;
/** Records keep arriving for this long, and until the poison has settled. */
const TRAFFIC_SECONDS = 3600;

interface Scenario {
  /** The share of delivery calls SAP fails whole, in %. */
  failurePercent: number;
  /** Seeds the draw of each call's fate. */
  seed: number;
  /** Seconds between two records' arrivals: traffic goes on until the poison has settled. */
  arrivalSeconds: number;
  /** Which of the first records is poison. */
  poison: number;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  failurePercent: fc.integer({ min: 30, max: 70 }),
  seed: fc.integer(),
  arrivalSeconds: fc.integer({ min: 60, max: 180 }),
  poison: fc.integer({ min: 0, max: 4 }),
});

/** A small seeded generator (mulberry32): each call's fate, repeatable for a scenario. */
const draws = (seed: number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** The registration ids a delivery request to SAP carried (a POST of one, or a `$batch` of several), in order. */
const idsOf = (body: string): string[] => [...body.matchAll(/"RegistrationId":"([^"]+)"/g)].map((m) => m[1]);

/** The seconds a failed message waits, as the worker's error says (`next in 36 s`, `back in 30 s`). */
const delayOf = (error: unknown): number => {
  const match = /(?:next|back) in (\d+) s/.exec(error instanceof Error ? error.message : '');
  return match ? Number(match[1]) : STEP_SECONDS;
};

describe('a flapping downstream (property)', () => {
  let aws: Awaited<ReturnType<typeof isolatedAws>>;
  let sap: SapSandbox;
  let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
  let salesQueue: string;
  /** Decides the fault of each delivery request as SAP receives it; none between runs. */
  let faultOf: (ids: string[], batch: boolean) => void = () => undefined;

  beforeAll(async () => {
    aws = await isolatedAws();
    [sap, bus] = await Promise.all([startSapSandbox(), startEventBridgeRecorder()]);
    Object.assign(process.env, {
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: sap.username,
      ERP_PASSWORD: sap.password,
      ERP_BATCH_SIZE: '3',
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
      EVENT_BUS_NAME: 'dealer-gateway-test',
    });
    salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
    // The sandbox logs a request before it takes its fault: the fault for this very request is injected then.
    const requests = sap.requests;
    const push = requests.push.bind(requests);
    requests.push = (...logged) => {
      for (const request of logged)
        if (request.method === 'POST') faultOf(idsOf(request.body), request.path.includes('$batch'));
      return push(...logged);
    };
  });
  afterAll(async () => {
    delete process.env.ERP_BATCH_SIZE;
    resetDownstreamClients();
    await Promise.all([sap.stop(), bus.stop()]);
  });
  beforeEach(() => resetDownstreamClients());

  /** One scenario played to its end; the violations of the invariants it shows. */
  const play = async (scenario: Scenario, outage: OutageSettings): Promise<string[]> => {
    await Promise.all([aws.drain(salesQueue), forgetHolds(aws.dynamoEndpoint)]);
    sap.clearFaults();
    const pool = await acceptSales(POOL);
    const poison = pool[scenario.poison];
    const { byId } = await receive(aws.sqs, salesQueue, pool.length);
    const draw = draws(scenario.seed);
    const share = scenario.failurePercent / 100;
    faultOf = (carried, batch) => {
      const on = batch ? 'batch' : 'post';
      if (draw() < share) sap.inject({ on, status: 503, message: 'FLAPPING' });
      else if (carried.includes(poison))
        sap.inject(
          batch
            ? { on, recordErrors: { [carried.indexOf(poison)]: { status: 503, message: 'POISON' } } }
            : { on, status: 503, message: 'POISON' },
        );
    };
    const instances = [createDownstreamHolds(outage), createDownstreamHolds(outage)];
    const start = Date.now();
    // SAP has been flapping for a while already: the calls of earlier records, counted as the workers counted them.
    for (let call = 0; call < OUTAGE.rateWindow; call++)
      await instances[0].noteOutcomes(
        'erp',
        [{ recordId: `earlier${call}`, kind: draw() < share ? 'transient' : 'delivered' }],
        new Date(start - (OUTAGE.rateWindow - call) * STEP_SECONDS * 1000),
      );
    let now = start;
    /** The records that have arrived; when each one's message is next visible to a worker, until it settles. */
    const ids: string[] = [];
    const visibleAt = new Map<string, number>();
    const arrive = () => {
      while (ids.length < POOL && start + ids.length * scenario.arrivalSeconds * 1000 <= now) {
        const id = pool[ids.length];
        ids.push(id);
        visibleAt.set(id, now);
      }
    };
    const poisonSettled = () => ids.includes(poison) && !visibleAt.has(poison);
    const trafficOn = () => ids.length < POOL && (now - start < TRAFFIC_SECONDS * 1000 || !poisonSettled());
    arrive();
    try {
      for (
        let step = 0;
        (visibleAt.size > 0 || trafficOn()) && now - start < RUN_LIMIT_SECONDS * 1000;
        step++
      ) {
        now += STEP_SECONDS * 1000;
        if (trafficOn()) arrive();
        const due = [...visibleAt]
          .filter(([, at]) => at <= now)
          .sort(([, a], [, b]) => a - b)
          .slice(0, SQS_BATCH)
          .map(([id]) => id);
        if (due.length === 0) continue;
        const results = await deliverMessages(
          due.map((id) => byId(id) as SQSRecord),
          {
            settings: DELIVERY,
            log: logger,
            tally: new OutcomeTally(),
            now: () => new Date(now),
            holds: instances[step % 2],
            outage,
          },
        );
        for (const [index, id] of due.entries()) {
          const result = results[index];
          const status = (await getStatusRecord(id))?.status;
          if (status !== 'accepted') visibleAt.delete(id);
          else visibleAt.set(id, now + (result.ok ? STEP_SECONDS : delayOf(result.error)) * 1000);
        }
      }
    } finally {
      faultOf = () => undefined;
      sap.clearFaults();
    }

    const violations: string[] = [];
    for (const id of ids) {
      const status = await getStatusRecord(id);
      const atSap = sap.registrations.filter((r) => r.RegistrationId === id).length;
      if (id === poison) {
        if (status?.status !== 'failed' || status.tries !== DELIVERY.maxAttempts || atSap !== 0)
          violations.push(
            `the poison ended ${status?.status} after ${status?.tries} tries, at SAP ${atSap} times`,
          );
      } else if (status?.status !== 'delivered' || atSap !== 1)
        violations.push(`${id} ended ${status?.status} (${status?.error ?? ''}), at SAP ${atSap} times`);
    }
    // Whenever it fails: what the run was, to tell a starved record from a clock run out (a run on a busy machine,
    // beside the fault campaign, once ended with a record still `accepted`).
    if (violations.length > 0)
      console.log(
        JSON.stringify({
          scenario,
          violations,
          simulatedSeconds: (now - start) / 1000,
          calls: sap.requests.filter((r) => r.method === 'POST').length,
          records: ids.length,
          tries: await Promise.all(ids.map(async (id) => (await getStatusRecord(id))?.tries)),
        }),
      );
    return violations;
  };

  it('delivers every record once and fails none but the poison, whose own failures still fail it', async () => {
    // Prepare, Act, Assess: each scenario played, its violations none.
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        expect(await play(scenario, OUTAGE)).toEqual([]);
      }),
      {
        numRuns: RUNS,
        examples: process.env.DEBUG_PROPERTY?.startsWith('{')
          ? [[JSON.parse(process.env.DEBUG_PROPERTY) as Scenario]]
          : [],
      },
    );
  }, 1_800_000);

  it('finds records failed for a flapping SAP with the failure-rate rule out of reach (control)', async () => {
    // Prepare: a window no run fills: the rate is never known, so it never holds and never gives a try back.
    const withoutRule = { ...OUTAGE, rateWindow: 1_000_000 };
    let found: string[] = [];
    // Act
    const result = await fc.check(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        found = await play(scenario, withoutRule);
        return !found.some((violation) => / ended failed /.test(violation));
      }),
      { numRuns: CONTROL_RUNS, endOnFailure: true },
    );
    // Assess
    expect(result.failed).toBe(true);
    expect(found.some((violation) => / ended failed \(.*FLAPPING/.test(violation))).toBe(true);
  }, 1_800_000);
});
