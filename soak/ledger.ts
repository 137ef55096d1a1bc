/**
 * The soak's reconciliation: what the clients were answered, what SAP and Salesforce really received, and what
 * the status look-ups say, record by record.
 *
 * A record is followed by its token (see workload.ts), not by the id the service gave it, so that a record
 * accepted twice under two ids shows up as such. For each record (each token):
 *
 * - ids: every id it carried, in any 200 answer and in any request a sandbox received (whatever the sandbox
 *   answered: a second record of the same content refused by SAP for its frame number counts too);
 * - creations: the downstream records made for it (SAP POSTs answered 201; Salesforce upserts answered 201);
 * - repeats: requests for it the downstream recognised as the same record by its id and created nothing for
 *   (SAP: 409 to a RegistrationId already created, docs/behaviour.md#sap-protocol; Salesforce: an upsert answered 200 or 204). The
 *   service sends a record again when it never learned the outcome of its last request: an answer lost (a reset,
 *   a timeout), its status write lost, or a SIGKILL (`repeatedAtKill`: within `killWindowMs` of one);
 * - answered 200: some request carrying it was answered 200;
 * - status: the GET look-up of each of its ids after the quiet period.
 *
 * **Exactly once**, as the pass rule checks it: every record answered 200 has one id, and the downstream holds
 * exactly one registration or case made for it (status `delivered`), or none (status `rejected` / `failed` with its
 * reason); sending the same record again under its own id is allowed and counted (`repeated`, `repeatedAtKill`),
 * because the downstream recognises it and creates nothing. Outcomes of a record answered 200, first match wins:
 *
 * | outcome | when |
 * |---|---|
 * | duplicated | two or more ids (a second record of the same content, whatever became of it), or two creations |
 * | stuck | its status is still `accepted` |
 * | delivered | created once, status `delivered` (repeats of the same id counted apart) |
 * | rejected / failed | never created, status `rejected` / `failed` with an error text |
 * | inconsistent | created once but its status says otherwise, or rejected / failed without a reason, or no id |
 * | lost | never created and not rejected or failed (status `delivered` without a creation, no status at all, ...) |
 *
 * Records never answered 200 may have been delivered (a request whose answer was lost), at most once under one id
 * (`duplicated` otherwise); records only ever refused (4xx) must never be (`leaked`). Status records still
 * `accepted` that no answer named are counted from the store (`stuckUnanswered`).
 */
import { COLLECTIONS_PATH } from '../sandbox/salesforceCollections.ts';
import type { LoggedRequest } from '../sandbox/server.ts';
import { type CarriedRecord, collectionsRecords, recordStatuses, sapBatchRecords } from './batchCalls.ts';
import type { Answer } from './client.ts';
import type { DownstreamCall } from './downstreamCall.ts';
import { type Plan, TOKEN_PATTERN } from './workload.ts';

export type { DownstreamCall } from './downstreamCall.ts';

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
  downstreamId?: string;
  /** The look-up's `test` mark (a test client's record). */
  test?: boolean;
}

export type Outcome = 'delivered' | 'rejected' | 'failed' | 'lost' | 'duplicated' | 'stuck' | 'inconsistent';

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
    /**
     * Records sent to the downstream again under their own id after a SIGKILL within the kill window (the window
     * README "Exactly once" admits); the downstream recognised them and created nothing. Allowed.
     */
    repeatedAtKill: number;
    /**
     * Records sent again under their own id otherwise (an answer or a status write lost); recognised, nothing
     * created. Allowed.
     */
    repeated: number;
    /** Records of one content that reached the downstream under two or more ids. Counted in `duplicated` too. */
    secondIds: number;
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

/** A request that made a downstream record: SAP 201, Salesforce 201 (an upsert that created the case). */
const creates = (call: DownstreamCall) => call.status === 201;

/**
 * A request the downstream recognised as a record it holds, by the record's id: SAP's 409 to a RegistrationId it
 * created before (a 200 too, as older sandboxes answered), a Salesforce upsert that updated (200, 204).
 */
const repeats = (call: DownstreamCall, createdBefore: boolean) =>
  call.downstream === 'salesforce'
    ? call.status === 200 || call.status === 204
    : createdBefore && (call.status === 409 || call.status === 200);

/**
 * SAP delivery requests from the sandbox's request log, one per registration: single POSTs of the entity set
 * with their own status, and each change set of a `$batch` with the status batchCalls.ts reads for it from when
 * the sandbox stored it (`stored`: the sandbox's registrations). `times[i]` is when request i arrived.
 */
export const sapCallsOf = (
  requests: LoggedRequest[],
  times: number[],
  servicePath: string,
  stored: readonly { RegistrationId: string; createdAt: string }[] = [],
): DownstreamCall[] => {
  const singles: DownstreamCall[] = [];
  const carried: CarriedRecord[] = [];
  const batchPath = `${servicePath.slice(0, servicePath.lastIndexOf('/'))}/$batch`;
  for (const [i, request] of requests.entries()) {
    if (request.method !== 'POST') continue;
    const target = request.path.split('?')[0].replace(/\/+$/, '');
    if (target === batchPath) {
      carried.push(...sapBatchRecords(request.body, times[i] ?? 0, request.status));
      continue;
    }
    if (target !== servicePath) continue;
    let id = '';
    try {
      id = String((JSON.parse(request.body) as { RegistrationId?: unknown }).RegistrationId ?? '');
    } catch {}
    singles.push({
      downstream: 'sap',
      at: times[i] ?? 0,
      status: request.status,
      id,
      token: TOKEN_PATTERN.exec(request.body)?.[0],
    });
  }
  const createdAt = new Map(stored.map((r) => [r.RegistrationId, Date.parse(r.createdAt)] as const));
  const candidates = [...singles.filter((call) => call.status === 201), ...carried];
  return [...singles, ...recordStatuses(carried, candidates, createdAt)];
};

/**
 * Salesforce Case deliveries from the sandbox's request log, one per case: single upserts (PATCH
 * …/sobjects/Case/<field>/<CrmId>) with their own status, and each record of a Collections call with the status
 * batchCalls.ts reads for it from when the sandbox stored it (`stored`: the sandbox's cases).
 */
export const salesforceCallsOf = (
  requests: LoggedRequest[],
  times: number[],
  stored: readonly { externalId: string; createdAt: string }[] = [],
  externalIdField = 'Web_Case_Id__c',
): DownstreamCall[] => {
  const singles: DownstreamCall[] = [];
  const carried: CarriedRecord[] = [];
  for (const [i, request] of requests.entries()) {
    if (request.method !== 'PATCH') continue;
    const path = request.path.split('?')[0];
    if (COLLECTIONS_PATH.test(path)) {
      carried.push(...collectionsRecords(request.body, times[i] ?? 0, request.status, externalIdField));
      continue;
    }
    const match = /\/sobjects\/Case\/[^/]+\/([^/?]+)/.exec(path);
    if (!match) continue;
    singles.push({
      downstream: 'salesforce',
      at: times[i] ?? 0,
      status: request.status,
      id: decodeURIComponent(match[1]),
      token: TOKEN_PATTERN.exec(request.body)?.[0],
    });
  }
  const createdAt = new Map(stored.map((c) => [c.externalId, Date.parse(c.createdAt)] as const));
  const candidates = [...singles.filter((call) => call.status === 201), ...carried];
  return [...singles, ...recordStatuses(carried, candidates, createdAt)];
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

  /** Every delivery request a sandbox received for a token, whatever it answered, in order of arrival. */
  const callsByToken = new Map<string, DownstreamCall[]>();
  for (const call of [...input.sapCalls, ...input.salesforceCalls]) {
    if (!call.token) continue;
    const list = callsByToken.get(call.token) ?? [];
    list.push(call);
    callsByToken.set(call.token, list);
  }
  for (const list of callsByToken.values()) list.sort((a, b) => a.at - b.at);

  /** What the downstream did with a token's requests: records created, and repeats it recognised. */
  const downstreamOf = (calls: DownstreamCall[]) => {
    const createdIds = new Set<string>();
    const carriedOut: DownstreamCall[] = [];
    let created = 0;
    let repeatCount = 0;
    let atKill = true;
    for (const call of calls) {
      const createdBefore = createdIds.has(call.id);
      if (creates(call)) {
        created++;
        createdIds.add(call.id);
      } else if (!repeats(call, createdBefore)) continue;
      else {
        repeatCount++;
        // Sent again right after a SIGKILL that followed the last request the downstream carried out.
        const last = carriedOut.at(-1);
        const killed =
          last !== undefined &&
          input.kills.some((kill) => last.at <= kill && kill - last.at <= killWindowMs && call.at > kill);
        if (!killed) atKill = false;
      }
      carriedOut.push(call);
    }
    return { created, repeatCount, repeatedAtKill: repeatCount > 0 && atKill };
  };

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
    repeated: 0,
    secondIds: 0,
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
    const { created, repeatCount, repeatedAtKill } = downstreamOf(calls);
    /** Every id the record carried: in the answers and in what the sandboxes received. */
    const allIds = new Set([...entry.ids, ...calls.map((call) => call.id).filter((id) => id !== '')]);
    const describe = () => {
      const statuses = [...entry.ids].map((id) => {
        const lookup = input.statuses.get(id);
        return lookup?.status ?? `http ${lookup?.http ?? '-'}`;
      });
      return `${entry.token} (${[...entry.kinds].join(', ')}) ids ${[...allIds].join(',') || '-'} requests ${
        calls.length
      } created ${created} repeats ${repeatCount} status ${statuses.join(',') || '-'}`;
    };
    const countRepeats = () => {
      if (repeatCount === 0) return;
      if (repeatedAtKill) {
        records.repeatedAtKill++;
        example('repeatedAtKill', describe());
      } else {
        records.repeated++;
        example('repeated', describe());
      }
    };
    if (allIds.size > 1) {
      records.secondIds++;
      example('secondIds', describe());
    }
    if (!entry.answered200) {
      if (allIds.size > 1 || created > 1) {
        records.duplicated++;
        records.duplicatedUnanswered++;
        example('duplicatedUnanswered', describe());
      } else if (created === 1) {
        countRepeats();
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
    const status = input.statuses.get([...entry.ids][0] ?? '');
    let outcome: Outcome;
    if (allIds.size > 1 || created > 1) {
      outcome = 'duplicated';
    } else if (entry.ids.size === 0) {
      outcome = 'inconsistent'; // answered 200 without an id for it (counted in malformed200 too)
    } else if (status?.status === 'accepted') {
      outcome = 'stuck';
    } else if (created === 1) {
      outcome = status?.status === 'delivered' ? 'delivered' : 'inconsistent';
      if (outcome === 'delivered') countRepeats();
    } else if (status?.status === 'rejected' || status?.status === 'failed') {
      outcome = status.error ? status.status : 'inconsistent';
    } else {
      outcome = 'lost';
    }
    outcomes.set(entry.token, outcome);
    records[outcome]++;
    // Failed records too: allowed in general, but none may be among those sent during an outage (campaign.ts).
    if (outcome !== 'delivered' && outcome !== 'rejected') example(outcome, describe());
  }

  if (input.acceptedInStore) {
    for (const id of input.acceptedInStore) {
      if (answeredIds.has(id)) continue;
      records.stuckUnanswered++;
      records.stuck++;
      example('stuckUnanswered', id);
    }
  }

  return {
    counts: {
      plans: input.results.length,
      requests,
      answers,
      records,
      violations,
      downstream: {
        sapPosts: input.sapCalls.length,
        sapCreated: input.sapCalls.filter(creates).length,
        salesforceUpserts: input.salesforceCalls.length,
        salesforceCreated: input.salesforceCalls.filter(creates).length,
      },
      examples,
    },
    outcomes,
  };
};

/**
 * Whether the promise held (exactly once, as the module's comment defines it): nothing lost, duplicated (a second
 * id or a second downstream record of one content), stuck, leaked or inconsistent, no contract violation. Repeats
 * of a record under its own id (`repeated`, `repeatedAtKill`) are reported, and allowed.
 */
export const promiseKept = (counts: LedgerCounts): boolean =>
  counts.records.lost === 0 &&
  counts.records.duplicated === 0 &&
  counts.records.stuck === 0 &&
  counts.records.leaked === 0 &&
  counts.records.inconsistent === 0 &&
  counts.violations.keyReuseAccepted === 0 &&
  counts.violations.malformed200 === 0;
