/**
 * Test mode in the fault campaign (docs/API.md, "Test mode"): a share of the traffic goes as the test client, with
 * the magic last names (`REJECT`, `RETRY`, `FAIL`) and ordinary ones, and the verdict checks its isolation. No test
 * record's request reached the sandboxes' SAP or Salesforce (every request they logged, whatever they answered,
 * searched for a test record's id, its RegistrationId or Salesforce external id, and its token); no test record's
 * message in a dead-letter queue; every test record ended as its last name says, marked `test` in its look-up.
 */
import type { LoggedRequest } from '../sandbox/server.ts';
import type { PlanResult, StatusLookup } from './ledger.ts';
import { type Operation, type Plan, TEST_CLIENT } from './workload.ts';

export { TEST_CLIENT };

/** A test record as the campaign sent it: its id (answered 200), token, operation and last name. */
export interface SentTestRecord {
  id: string;
  token: string;
  op: Operation;
  lastName: string;
}

/** What a test record's look-up must say at the end, by its last name. */
export interface ExpectedTestOutcome {
  status: 'delivered' | 'rejected' | 'failed';
  attempts: number;
  /**
   * `FAIL` only: the fewest attempts it may show. A try counts toward DELIVERY_MAX_ATTEMPTS when claimed, an
   * attempt when the simulator answered it: a try lost to the campaign's faults (a SIGKILL or a lost write between
   * the claim and the outcome) spends one without an attempt, as for a live record.
   */
  fewestAttempts?: number;
}

/**
 * The end a test record's last name asks for (lib/simulators/scenario.ts): compared without case, `REJECT`
 * rejected on its first attempt, `RETRY` delivered on its third, `FAIL` failed after every attempt, anything else
 * delivered at once.
 *
 * @example
 * expectedTestOutcome('Retry', 5) // { status: 'delivered', attempts: 3 }
 * expectedTestOutcome('FAIL', 5) // { status: 'failed', attempts: 5, fewestAttempts: 1 }
 * expectedTestOutcome('Soakrider', 5) // { status: 'delivered', attempts: 1 }
 */
export const expectedTestOutcome = (lastName: string, maxAttempts: number): ExpectedTestOutcome => {
  const name = lastName.trim().toUpperCase();
  if (name === 'REJECT') return { status: 'rejected', attempts: 1 };
  if (name === 'RETRY') return { status: 'delivered', attempts: 3 };
  if (name === 'FAIL') return { status: 'failed', attempts: maxAttempts, fewestAttempts: 1 };
  return { status: 'delivered', attempts: 1 };
};

/** The downstream id a delivered test record shows: an SAP-style document number, a Salesforce-style case id. */
const SIMULATED_ID: Record<Operation, RegExp> = {
  sale: /^49\d{6}$/,
  case: /^500[0-9A-Za-z]{15}$/,
};

/**
 * The test records the campaign had answered 200 (each id once), with the last name each was sent with.
 *
 * @example
 * sentTestRecords(results) // [{ id: '3f0c…', token: 'SKAB12R7', op: 'sale', lastName: 'Retry' }, …]
 */
export const sentTestRecords = (results: readonly PlanResult[]): SentTestRecord[] => {
  const byId = new Map<string, SentTestRecord>();
  for (const { plan, sends } of results) {
    if (!plan.test) continue;
    for (const send of sends)
      for (const answer of send.answers) {
        if (answer.status !== 200) continue;
        for (const [i, id] of (answer.ids ?? []).entries()) {
          const record = plan.records[i];
          if (!record || byId.has(id)) continue;
          const lastName = String(record.op === 'sale' ? record.fields.Name : record.fields.surname);
          byId.set(id, { id, token: record.token, op: record.op, lastName });
        }
      }
  }
  return [...byId.values()];
};

/** Whether a plan is the test client's (its records are test records). */
export const isTestPlan = (plan: Pick<Plan, 'test'>): boolean => plan.test === true;

/**
 * What the ledger (ledger.ts, each record at SAP or Salesforce exactly once) is given: the live plans only, and the
 * records left `accepted` but the test ones. A test record never reaches SAP or Salesforce, so the ledger would
 * count every one lost, and one left `accepted` is this module's (not as named), not a live record stuck.
 *
 * @example
 * reconcile({ ...liveLedgerInput(results, stillAccepted), sapCalls, salesforceCalls, kills, statuses })
 */
export const liveLedgerInput = (
  results: readonly PlanResult[],
  acceptedInStore: readonly string[] | undefined,
): { results: PlanResult[]; acceptedInStore?: string[] } => {
  const testIds = new Set(sentTestRecords(results).map((record) => record.id));
  return {
    results: results.filter(({ plan }) => !isTestPlan(plan)),
    ...(acceptedInStore === undefined
      ? {}
      : { acceptedInStore: acceptedInStore.filter((id) => !testIds.has(id)) }),
  };
};

export interface TestModeCounts {
  /** Test records answered 200. */
  testRecords: number;
  /** Of them, delivered / rejected / failed as their last names asked. */
  testAsNamed: number;
  /** Requests that SAP or Salesforce received for a test record (must be 0). */
  testAtDownstream: number;
  /** Test records whose message was seen in a dead-letter queue (must be 0). */
  testDeadLettered: number;
  /** Test records that did not end as their last name says (state, attempts, downstream id; must be 0). */
  testNotAsNamed: number;
  /** Test records whose look-up did not say `"test": true` (must be 0). */
  testUnmarked: number;
}

export interface TestModeInput {
  records: readonly SentTestRecord[];
  /** Every request the SAP and Salesforce sandboxes logged. */
  downstreamRequests: readonly Pick<LoggedRequest, 'method' | 'path' | 'body'>[];
  /** Record ids seen in a dead-letter queue during the campaign (deadLetters.ts). */
  deadLettered: ReadonlySet<string>;
  /** The final look-ups by id (with `test` and `downstreamId`). */
  statuses: ReadonlyMap<string, StatusLookup>;
  /** DELIVERY_MAX_ATTEMPTS of the service. */
  maxAttempts: number;
}

/**
 * The test records' verdict: counts, and up to five examples of each breach (ids and tokens only).
 *
 * @example
 * const { counts } = checkTestMode({ records, downstreamRequests: [...sap.requests, ...salesforce.requests],
 *   deadLettered, statuses, maxAttempts: 5 });
 * testModeKept(counts) // true
 */
export const checkTestMode = (
  input: TestModeInput,
): { counts: TestModeCounts; examples: Record<string, string[]> } => {
  const examples: Record<string, string[]> = {};
  const example = (kind: string, text: string) => {
    const list = examples[kind] ?? [];
    examples[kind] = list;
    if (list.length < 5) list.push(text);
  };
  const counts: TestModeCounts = {
    testRecords: input.records.length,
    testAsNamed: 0,
    testAtDownstream: 0,
    testDeadLettered: 0,
    testNotAsNamed: 0,
    testUnmarked: 0,
  };
  const requests = input.downstreamRequests.map((request) => `${request.path}\n${request.body}`);
  for (const record of input.records) {
    const reached = requests.filter((text) => text.includes(record.id) || text.includes(record.token));
    if (reached.length > 0) {
      counts.testAtDownstream += reached.length;
      example('testAtDownstream', `${record.id} (${record.token}): ${reached.length} request(s)`);
    }
    if (input.deadLettered.has(record.id)) {
      counts.testDeadLettered++;
      example('testDeadLettered', record.id);
    }
    const status = input.statuses.get(record.id);
    if (status?.test !== true) {
      counts.testUnmarked++;
      example('testUnmarked', `${record.id}: look-up ${status?.http ?? 'none'}`);
    }
    const expected = expectedTestOutcome(record.lastName, input.maxAttempts);
    const idFits =
      expected.status !== 'delivered' || SIMULATED_ID[record.op].test(status?.downstreamId ?? '');
    const attempts = status?.attempts ?? -1;
    const attemptsFit =
      attempts === expected.attempts ||
      (expected.fewestAttempts !== undefined &&
        attempts >= expected.fewestAttempts &&
        attempts <= expected.attempts);
    if (status?.status === expected.status && attemptsFit && idFits) {
      counts.testAsNamed++;
    } else {
      counts.testNotAsNamed++;
      example(
        'testNotAsNamed',
        `${record.id} (${record.op}, last name ${record.lastName}): ${status?.status ?? '?'} after ${
          status?.attempts ?? '?'
        } attempt(s)${status?.downstreamId ? `, ${status.downstreamId}` : ''}, expected ${expected.status} after ${
          expected.attempts
        }`,
      );
    }
  }
  return { counts, examples };
};

/**
 * Whether test mode kept its promise: nothing reached SAP or Salesforce, nothing dead-lettered, every record
 * marked and ended as named.
 *
 * @example
 * testModeKept({ testRecords: 40, testAsNamed: 40, testAtDownstream: 0, testDeadLettered: 0, testNotAsNamed: 0, testUnmarked: 0 }) // true
 */
export const testModeKept = (counts: TestModeCounts): boolean =>
  counts.testAtDownstream === 0 &&
  counts.testDeadLettered === 0 &&
  counts.testNotAsNamed === 0 &&
  counts.testUnmarked === 0;
