/**
 * Test mode's isolation, both ways (docs/API.md, "Test mode"), as a property over test and live clients together:
 * random records (sales and cases, test and live, magic and ordinary last names) through the worker while SAP and
 * Salesforce are up, down, or answering parts locked, on the real stand-ins (dynalite, fauxqs, both sandboxes). After
 * every scenario:
 * 1. no request at SAP or Salesforce names a test record (so none counts toward the Salesforce allowance either);
 * 2. every live record delivered is at SAP or Salesforce (none answered by a simulator);
 * 3. no test record opens, closes or feeds a hold (none of its outcomes reaches the hold);
 * 4. no test record reaches a dead-letter queue;
 * 5. no test outcome is counted as a live metric (which the alarms read);
 * 6. every test record ends as its last name says, whatever SAP and Salesforce did.
 * Each invariant has a control: lib/delivery/isolation.ts with that one decision broken, which must be found.
 */
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import type { deliverMessages as DeliverMessages } from '../../lib/delivery/deliverBatch.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds, type DownstreamHolds } from '../../lib/outage/hold.ts';
import type { DeliverySettings, OutageSettings } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { forgetHolds, receive } from '../delivery/support.ts';

const DELIVERY: DeliverySettings = { maxAttempts: 3, retryBaseSeconds: 60, leaseSeconds: 90 };
const OUTAGE: OutageSettings = {
  afterFailures: 3,
  probeSeconds: 30,
  failureRate: 0.5,
  rateWindow: 20,
  apiUsageShare: 0.8,
  cacheSeconds: 0,
};
const RUNS = 20;
const CONTROL_RUNS = 10;

type Name = 'Sample' | 'REJECT' | 'RETRY' | 'FAIL';
interface PlannedRecord {
  test: boolean;
  kind: 'sale' | 'case';
  name: Name;
}
type Weather = 'fine' | 'sapDown' | 'salesforceDown' | 'locked';
interface Scenario {
  records: PlannedRecord[];
  steps: Weather[];
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  records: fc.array(
    fc.record({
      test: fc.boolean(),
      kind: fc.constantFrom<'sale' | 'case'>('sale', 'case'),
      name: fc.constantFrom<Name>('Sample', 'REJECT', 'RETRY', 'FAIL'),
    }),
    { minLength: 2, maxLength: 8 },
  ),
  steps: fc.array(fc.constantFrom<Weather>('fine', 'sapDown', 'salesforceDown', 'locked'), {
    minLength: 1,
    maxLength: 5,
  }),
});

/** What a test record's name asks for: its final state and attempts. */
const expected: Record<Name, { status: string; attempts: number }> = {
  Sample: { status: 'delivered', attempts: 1 },
  REJECT: { status: 'rejected', attempts: 1 },
  RETRY: { status: 'delivered', attempts: 3 },
  FAIL: { status: 'failed', attempts: DELIVERY.maxAttempts },
};

/** The outcomes a tally was given, by mode (the mode a metric carries). */
class RecordingTally extends OutcomeTally {
  readonly added: { name: string; mode: string }[] = [];
  override add(
    name: Parameters<OutcomeTally['add']>[0],
    downstream: 'erp' | 'crm',
    latencyMs?: number,
    mode: 'live' | 'test' = 'live',
  ): void {
    this.added.push({ name, mode });
    super.add(name, downstream, latencyMs, mode);
  }
}

/** A plant: lib/delivery/isolation.ts with one decision broken. */
type Plant =
  | 'none'
  | 'testToDownstream'
  | 'liveToSimulator'
  | 'testFeedsHold'
  | 'testDeadLettered'
  | 'testAsLive';

describe('test mode’s isolation (property)', () => {
  let stack: DeliveryStack;
  let aws: DeliveryStack['aws'];
  let sap: DeliveryStack['sap'];
  let salesforce: DeliveryStack['salesforce'];

  beforeAll(async () => {
    stack = await startDeliveryStack();
    ({ aws, sap, salesforce } = stack);
  });
  afterAll(async () => {
    vi.doUnmock('../../lib/delivery/isolation.ts');
    await stack.stop();
  });
  beforeEach(() => vi.resetModules());

  /** The worker's deliverMessages, with isolation.ts broken as the plant says. */
  const workerWith = async (plant: Plant): Promise<typeof DeliverMessages> => {
    vi.resetModules();
    vi.doMock('../../lib/delivery/isolation.ts', async (importOriginal) => {
      const original = await importOriginal<typeof import('../../lib/delivery/isolation.ts')>();
      const downstreams = await import('../../lib/delivery/downstreams.ts');
      switch (plant) {
        case 'testToDownstream':
          return { ...original, callerFor: (d: 'erp' | 'crm') => downstreams.downstreamCaller(d) };
        case 'liveToSimulator':
          return { ...original, callerFor: async (d: 'erp' | 'crm') => downstreams.simulatorCaller(d) };
        case 'testFeedsHold':
          return { ...original, holdsFor: (_mode: string, live: DownstreamHolds) => live };
        case 'testDeadLettered':
          return { ...original, deadLettered: () => true };
        case 'testAsLive':
          return { ...original, metricMode: () => 'live' };
        default:
          return original;
      }
    });
    return (await import('../../lib/delivery/deliverBatch.ts')).deliverMessages;
  };

  const accept = async (planned: PlannedRecord): Promise<string> => {
    if (planned.kind === 'sale') {
      const body = [salesRegistrationInput({ FrameNum: uniqueFrame('TPROP'), Name: planned.name })];
      const key = planned.test ? testKeys.testDealer : testKeys.dealer;
      const response = await salesHandler(
        jsonPost('/erp/sales_registration', body, { 'x-api-key': key }),
        lambdaContext(),
      );
      return JSON.parse(response.body).registrations[0].id;
    }
    const key = planned.test ? testKeys.testDealer : testKeys.webForms;
    const body = caseInput({ surname: planned.name, frameNo: uniqueFrame('TPROP') });
    const response = await caseHandler(jsonPost('/crm/case', body, { 'x-api-key': key }), lambdaContext());
    return JSON.parse(response.body).CrmId;
  };

  const weather = (step: Weather) => {
    salesforce.clearFaults();
    sap.outage.setDown(step === 'sapDown');
    salesforce.outage.setDown(step === 'salesforceDown');
    if (step === 'locked') {
      const lock = [
        { errorCode: 'UNABLE_TO_LOCK_ROW', message: 'unable to obtain exclusive access', fields: [] },
      ];
      salesforce.inject(
        { on: 'collections', recordErrors: { 0: lock } },
        { on: 'upsert', status: 400, errors: lock },
      );
    }
  };

  /** One scenario with the worker given; the violations of the six invariants. */
  const play = async (scenario: Scenario, deliver: typeof DeliverMessages): Promise<string[]> => {
    const queues = aws.resources.queues;
    await Promise.all([
      aws.drain(queues.SalesRegistrationQueue.url),
      aws.drain(queues.CaseQueue.url),
      forgetHolds(aws.dynamoEndpoint),
    ]);
    const planned = new Map<string, PlannedRecord>();
    for (const record of scenario.records) planned.set(await accept(record), record);
    const ids = [...planned.keys()];
    const sales = ids.filter((id) => planned.get(id)?.kind === 'sale');
    const cases = ids.filter((id) => !sales.includes(id));
    const saleMessages = (await receive(aws.sqs, queues.SalesRegistrationQueue.url, sales.length)).records;
    const caseMessages = (await receive(aws.sqs, queues.CaseQueue.url, cases.length)).records;
    const messages = new Map<string, SQSRecord>(
      [...saleMessages, ...caseMessages].map((message) => [JSON.parse(message.body).id, message]),
    );
    const noted: string[] = [];
    const real = createDownstreamHolds(OUTAGE);
    const holds: DownstreamHolds = {
      ...real,
      noteOutcomes: async (downstream, outcomes, now) => {
        noted.push(...outcomes.map((outcome) => outcome.recordId));
        return real.noteOutcomes(downstream, outcomes, now);
      },
    };
    const tally = new RecordingTally();
    let now = Date.now();
    const round = async () => {
      const open: SQSRecord[] = [];
      for (const id of ids)
        if ((await getStatusRecord(id))?.status === 'accepted') open.push(messages.get(id) as SQSRecord);
      if (open.length > 0)
        await deliver(open, {
          settings: DELIVERY,
          log: logger,
          tally,
          now: () => new Date(now),
          holds,
          outage: OUTAGE,
        });
      return open.length;
    };
    for (const step of scenario.steps) {
      weather(step);
      now += 600_000;
      await round();
    }
    weather('fine');
    salesforce.clearFaults();
    for (let i = 0; i < 10; i++) {
      now += 600_000;
      if ((await round()) === 0) break;
    }

    const violations: string[] = [];
    const testIds = ids.filter((id) => planned.get(id)?.test);
    const seenBy = (requests: { body: string }[]) =>
      requests.filter((r) => testIds.some((id) => r.body.includes(id)));
    if (seenBy(sap.requests).length + seenBy(salesforce.requests).length > 0)
      violations.push('1: a test record reached SAP or Salesforce');
    for (const id of ids.filter((id) => !planned.get(id)?.test)) {
      const status = await getStatusRecord(id);
      const atDownstream =
        sap.registrations.some((r) => r.RegistrationId === id) ||
        salesforce.cases.some((c) => c.externalId === id);
      if (status?.status === 'delivered' && !atDownstream)
        violations.push('2: a live record answered by a simulator');
    }
    if (noted.some((id) => testIds.includes(id))) violations.push('3: a test record fed a hold');
    const deadLetters = [
      ...(await aws.drain(queues.SalesRegistrationDeadLetterQueue.url)),
      ...(await aws.drain(queues.CaseDeadLetterQueue.url)),
    ];
    if (deadLetters.some((message) => testIds.includes(message.id)))
      violations.push('4: a test record reached a dead-letter queue');
    const liveOutcomes = tally.added.filter(
      (added) => added.mode === 'live' && added.name !== 'retried',
    ).length;
    const liveSettled = (
      await Promise.all(ids.filter((id) => !planned.get(id)?.test).map((id) => getStatusRecord(id)))
    ).filter((status) => status?.status !== 'accepted').length;
    if (liveOutcomes > liveSettled) violations.push('5: a test outcome counted as a live metric');
    for (const id of testIds) {
      const status = await getStatusRecord(id);
      const want = expected[planned.get(id)?.name as Name];
      if (status?.status !== want.status || status.attempts !== want.attempts)
        violations.push(
          `6: a test record ended ${status?.status}/${status?.attempts}, not ${want.status}/${want.attempts}`,
        );
    }
    return violations;
  };

  it('keeps test and live records apart both ways, whatever SAP and Salesforce do', async () => {
    // Prepare
    const deliver = await workerWith('none');
    // Act, Assess
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        expect(await play(scenario, deliver)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);

  for (const [plant, invariant] of [
    ['testToDownstream', /^1:/],
    ['liveToSimulator', /^2:/],
    ['testFeedsHold', /^3:/],
    ['testDeadLettered', /^4:/],
    ['testAsLive', /^5:/],
  ] as const) {
    it(`finds its planted fault: ${plant} (control)`, async () => {
      // Prepare
      const deliver = await workerWith(plant);
      // Act
      const result = await fc.check(
        fc.asyncProperty(scenarioArb, async (scenario) => {
          const found = await play(scenario, deliver);
          return !found.some((violation) => invariant.test(violation));
        }),
        { numRuns: CONTROL_RUNS, endOnFailure: true },
      );
      // Assess
      expect(result.failed).toBe(true);
    }, 600_000);
  }
});
