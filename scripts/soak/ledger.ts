/**
 * The soak's reconciliation: what the clients were answered, what SAP and Salesforce really received, and what
 * the status look-ups say, record by record.
 *
 * A record is followed by its token (see workload.ts), not by the id the service gave it, so that a record
 * accepted twice under two ids shows up as such. For each record:
 *
 * - deliveries: the delivery requests the sandbox carried out for it (SAP: POSTs of the entity answered 201, or
 *   200 for a repeat of a RegistrationId; Salesforce: PATCH upserts answered 201 or 200). Requests the sandbox
 *   answered with a fault, a refusal or a dropped connection changed nothing and do not count;
 * - answered 200: some request carrying it was answered 200; its id(s) come from those answers;
 * - status: the GET look-up of each of its ids after the quiet period.
 *
 * Outcomes of a record answered 200, first match wins:
 *
 * | outcome | when |
 * |---|---|
 * | duplicated | answered with two different ids, or delivered more than once (not explained by a kill) |
 * | repeatedAtKill | delivered twice, the second time after a SIGKILL that came within `killWindowMs` of the first: the window README "Exactly once" admits (downstream answered, status not yet written) |
 * | stuck | its status is still `accepted` |
 * | delivered | delivered exactly once, status `delivered` |
 * | rejected / failed | never delivered, status `rejected` / `failed` with an error text |
 * | inconsistent | delivered once but its status says otherwise, or rejected / failed without a reason |
 * | lost | never delivered and not rejected or failed (status `delivered` without a delivery, no status at all, ...) |
 *
 * Records never answered 200 may have been delivered (a request whose answer was lost), at most once
 * (`duplicated` otherwise); records only ever refused (4xx) must never be (`leaked`). Status records still
 * `accepted` that no answer named are counted from the store (`stuckUnanswered`).
 */
import type { LoggedRequest } from '../../sandbox/server.ts';
import type { Answer } from './client.ts';
import { type Plan, TOKEN_PATTERN } from './workload.ts';

/** One delivery request a sandbox received. */
export interface DownstreamCall {
  at: number;
  status: number;
  /** RegistrationId (SAP) or CrmId (Salesforce). */
  id: string;
  token?: string;
}

export interface PlanResult {
  plan: Plan;
  /** One entry per identical request sent at once (a race has several). */
  sends: { answers: Answer[]; final: Answer }[];
}

export interface StatusLookup {
  /** HTTP status of the look-up (0: no answer). */
  http: number;
  status?: string;
  error?: string;
  attempts?: number;
}

export type Outcome =
  | 'delivered'
  | 'rejected'
  | 'failed'
  | 'lost'
  | 'duplicated'
  | 'repeatedAtKill'
  | 'stuck'
  | 'inconsistent';

export interface LedgerInput {
  results: PlanResult[];
  sapCalls: DownstreamCall[];
  salesforceCalls: DownstreamCall[];
  /** Times of the SIGKILLs of npm start. */
  kills: number[];
  /** Status look-ups by id (every id answered 200). */
  statuses: Map<string, StatusLookup>;
  /** Ids of status records still `accepted` in the store at the end (undefined: the store could not be read). */
  acceptedInStore?: string[];
  killWindowMs?: number;
}

export interface LedgerCounts {
  plans: number;
  requests: number;
  answers: Record<string, number>;
  records: {
    sent: number;
    accepted: number;
    delivered: number;
    rejected: number;
    failed: number;
    lost: number;
    duplicated: number;
    stuck: number;
    repeatedAtKill: number;
    inconsistent: number;
    /** Never answered 200, delivered once (a request whose answer was lost or that gave up): allowed. */
    deliveredUnanswered: number;
    /** Never answered 200, delivered more than once. Counted in `duplicated` too. */
    duplicatedUnanswered: number;
    /** Only ever refused (4xx), yet delivered. */
    leaked: number;
    /** Status records still `accepted` that no 200 answer named. Counted in `stuck` too. */
    stuckUnanswered: number;
  };
  /** Answers that broke the contract outright. */
  violations: {
    /** An Idempotency-Key reused with another body answered 200 (422 or 409 expected). */
    keyReuseAccepted: number;
    /** A 200 without the contract's shape (ids missing, another count, another order). */
    malformed200: number;
  };
  downstream: {
    sapPosts: number;
    sapCreated: number;
    salesforceUpserts: number;
    salesforceCreated: number;
  };
  /** A few tokens and ids per bad outcome, to start looking from. */
  examples: Record<string, string[]>;
}

const effective = (call: DownstreamCall) => call.status === 200 || call.status === 201;

/**
 * SAP delivery requests (POSTs of the entity set) from the sandbox's request log; `times[i]` is when request i
 * arrived.
 */
export const sapCallsOf = (
  requests: LoggedRequest[],
  times: number[],
  servicePath: string,
): DownstreamCall[] => {
  const calls: DownstreamCall[] = [];
  for (const [i, request] of requests.entries()) {
    if (request.method !== 'POST' || request.path.split('?')[0].replace(/\/+$/, '') !== servicePath) continue;
    let id = '';
    try {
      id = String((JSON.parse(request.body) as { RegistrationId?: unknown }).RegistrationId ?? '');
    } catch {}
    calls.push({
      at: times[i] ?? 0,
      status: request.status,
      id,
      token: TOKEN_PATTERN.exec(request.body)?.[0],
    });
  }
  return calls;
};

/** Salesforce Case upserts (PATCH …/sobjects/Case/<field>/<CrmId>) from the sandbox's request log. */
export const salesforceCallsOf = (requests: LoggedRequest[], times: number[]): DownstreamCall[] => {
  const calls: DownstreamCall[] = [];
  for (const [i, request] of requests.entries()) {
    const match = /\/sobjects\/Case\/[^/]+\/([^/?]+)/.exec(request.path);
    if (request.method !== 'PATCH' || !match) continue;
    calls.push({
      at: times[i] ?? 0,
      status: request.status,
      id: decodeURIComponent(match[1]),
      token: TOKEN_PATTERN.exec(request.body)?.[0],
    });
  }
  return calls;
};

interface TokenEntry {
  token: string;
  op: Plan['op'];
  ids: Set<string>;
  answered200: boolean;
  /** Some answer left it open whether the record was taken (no answer, 5xx). */
  ambiguous: boolean;
  /** The kinds of plan that carried it (for the examples). */
  kinds: Set<string>;
}

export const reconcile = (input: LedgerInput): { counts: LedgerCounts; outcomes: Map<string, Outcome> } => {
  const killWindowMs = input.killWindowMs ?? 5_000;
  const answers: Record<string, number> = {};
  let requests = 0;
  const violations = { keyReuseAccepted: 0, malformed200: 0 };
  const examples: Record<string, string[]> = {};
  const example = (kind: string, text: string) => {
    const list = examples[kind] ?? [];
    examples[kind] = list;
    if (list.length < 5) list.push(text);
  };

  const tokens = new Map<string, TokenEntry>();
  for (const { plan, sends } of input.results) {
    for (const record of plan.records) {
      if (!tokens.has(record.token)) {
        tokens.set(record.token, {
          token: record.token,
          op: record.op,
          ids: new Set(),
          answered200: false,
          ambiguous: false,
          kinds: new Set(),
        });
      }
      tokens.get(record.token)?.kinds.add(plan.copies > 1 ? `${plan.kind}x${plan.copies}` : plan.kind);
    }
    for (const send of sends) {
      for (const answer of send.answers) {
        requests++;
        answers[String(answer.status)] = (answers[String(answer.status)] ?? 0) + 1;
        if (answer.status === 200 && answer.malformed) {
          violations.malformed200++;
          example('malformed200', `plan ${plan.index}: ${answer.malformed}`);
        }
        for (const [i, record] of plan.records.entries()) {
          const entry = tokens.get(record.token) as TokenEntry;
          if (answer.status === 200) {
            entry.answered200 = true;
            const id = answer.ids?.[i];
            if (id) entry.ids.add(id);
          } else if (answer.status === 0 || answer.status >= 500) {
            entry.ambiguous = true;
          }
        }
      }
      if (plan.kind === 'keyConflict' && send.final.status === 200) {
        violations.keyReuseAccepted++;
        example('keyReuseAccepted', `plan ${plan.index} (key of plan ${plan.of})`);
      }
    }
  }

  const callsByToken = new Map<string, DownstreamCall[]>();
  for (const call of [...input.sapCalls, ...input.salesforceCalls]) {
    if (!call.token || !effective(call)) continue;
    const list = callsByToken.get(call.token) ?? [];
    list.push(call);
    callsByToken.set(call.token, list);
  }
  for (const list of callsByToken.values()) list.sort((a, b) => a.at - b.at);

  /** Every delivery after the first followed a kill that came within the window after the one before it. */
  const explainedByKills = (calls: DownstreamCall[]) =>
    calls.length > 1 &&
    new Set(calls.map((call) => call.id)).size === 1 &&
    calls
      .slice(1)
      .every((call, i) =>
        input.kills.some(
          (kill) => calls[i].at <= kill && kill - calls[i].at <= killWindowMs && call.at > kill,
        ),
      );

  const records = {
    sent: tokens.size,
    accepted: 0,
    delivered: 0,
    rejected: 0,
    failed: 0,
    lost: 0,
    duplicated: 0,
    stuck: 0,
    repeatedAtKill: 0,
    inconsistent: 0,
    deliveredUnanswered: 0,
    duplicatedUnanswered: 0,
    leaked: 0,
    stuckUnanswered: 0,
  };
  const outcomes = new Map<string, Outcome>();
  const answeredIds = new Set<string>();

  for (const entry of tokens.values()) {
    const calls = callsByToken.get(entry.token) ?? [];
    const describe = () => {
      const statuses = [...entry.ids].map((id) => {
        const lookup = input.statuses.get(id);
        return lookup?.status ?? `http ${lookup?.http ?? '-'}`;
      });
      return `${entry.token} (${[...entry.kinds].join(', ')}) ids ${[...entry.ids].join(',') || '-'} deliveries ${
        calls.length
      } status ${statuses.join(',') || '-'}`;
    };
    if (!entry.answered200) {
      if (calls.length > 1) {
        if (explainedByKills(calls)) {
          records.repeatedAtKill++;
          example('repeatedAtKill', describe());
        } else {
          records.duplicated++;
          records.duplicatedUnanswered++;
          example('duplicatedUnanswered', describe());
        }
      } else if (calls.length === 1) {
        if (entry.ambiguous) records.deliveredUnanswered++;
        else {
          records.leaked++;
          example('leaked', describe());
        }
      }
      continue;
    }
    records.accepted++;
    for (const id of entry.ids) answeredIds.add(id);
    const statuses = [...entry.ids].map((id) => input.statuses.get(id));
    const status = statuses[0];
    let outcome: Outcome;
    if (entry.ids.size > 1) {
      outcome = 'duplicated';
    } else if (entry.ids.size === 0) {
      outcome = 'inconsistent'; // answered 200 without an id for it (counted in malformed200 too)
    } else if (calls.length > 1 && !explainedByKills(calls)) {
      outcome = 'duplicated';
    } else if (status?.status === 'accepted') {
      outcome = 'stuck';
    } else if (calls.length > 1) {
      outcome = status?.status === 'delivered' ? 'repeatedAtKill' : 'inconsistent';
    } else if (calls.length === 1) {
      outcome = status?.status === 'delivered' ? 'delivered' : 'inconsistent';
    } else if (status?.status === 'rejected' || status?.status === 'failed') {
      outcome = status.error ? status.status : 'inconsistent';
    } else {
      outcome = 'lost';
    }
    outcomes.set(entry.token, outcome);
    records[outcome]++;
    if (outcome !== 'delivered' && outcome !== 'rejected' && outcome !== 'failed')
      example(outcome, describe());
  }

  if (input.acceptedInStore) {
    for (const id of input.acceptedInStore) {
      if (answeredIds.has(id)) continue;
      records.stuckUnanswered++;
      records.stuck++;
      example('stuckUnanswered', id);
    }
  }

  const sapEffective = input.sapCalls.filter(effective);
  const sfEffective = input.salesforceCalls.filter(effective);
  return {
    counts: {
      plans: input.results.length,
      requests,
      answers,
      records,
      violations,
      downstream: {
        sapPosts: input.sapCalls.length,
        sapCreated: sapEffective.filter((call) => call.status === 201).length,
        salesforceUpserts: input.salesforceCalls.length,
        salesforceCreated: sfEffective.filter((call) => call.status === 201).length,
      },
      examples,
    },
    outcomes,
  };
};

/** Whether the promise held: nothing lost, duplicated, stuck, leaked or inconsistent, no contract violation. */
export const promiseKept = (counts: LedgerCounts): boolean =>
  counts.records.lost === 0 &&
  counts.records.duplicated === 0 &&
  counts.records.stuck === 0 &&
  counts.records.leaked === 0 &&
  counts.records.inconsistent === 0 &&
  counts.violations.keyReuseAccepted === 0 &&
  counts.violations.malformed200 === 0;
