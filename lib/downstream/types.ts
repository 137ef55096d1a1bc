/** Types shared by the downstream adapters (lib/downstream/erp, lib/downstream/crm) and the worker that uses them. */

/**
 * What a delivery adapter reports for one record.
 * `reachedDownstream` is true when the delivery request itself (not a token or CSRF fetch) was sent
 * and the downstream answered or timed out; the status record counts those as attempts.
 */
export type DeliveryOutcome =
  | {
      kind: 'delivered';
      downstreamId?: string;
      /**
       * The HTTP status of the answer that delivered the record (a `$batch` change set's own, a Collections call's),
       * kept for its timeline (lib/records/story.ts).
       */
      status?: number;
      reachedDownstream: true;
    }
  | TransientOutcome
  | { kind: 'permanent'; error: string; reachedDownstream: boolean };

/** A Salesforce answer's `Sforce-Limit-Info: api-usage=<used>/<allowed>` (lib/downstream/crm/apiUsage.ts). */
export interface ApiUsage {
  used: number;
  allowed: number;
}

/** A failure that may pass: the record is tried again. */
export interface TransientOutcome {
  kind: 'transient';
  error: string;
  reachedDownstream: boolean;
  /**
   * The call failed as a whole (network, timeout, a refused token, a non-2xx answer to the whole `$batch` or
   * Collections call, an answer that cannot be matched part by part): no part of it judged this record. Set by the
   * adapter that made the call, never inferred.
   */
  wholeCall?: true;
}

/** One record of a batched delivery: `id` is what the single call takes (RegistrationId, CrmId). */
export interface BatchItem<R> {
  id: string;
  record: R;
}

/**
 * What one call to a downstream decided: one outcome per distinct id, each decided as a single call would decide it.
 */
export interface CallOutcome {
  outcomes: Map<string, DeliveryOutcome>;
  /**
   * Set when the call failed as a whole: every record's outcome is this failure (marked `wholeCall`). A lone record's
   * single call that reached the downstream and failed is that record's own failure, and does not set it.
   */
  failedWhole?: TransientOutcome;
  /** The org's API usage this call's answer reported (Salesforce only). */
  apiUsage?: ApiUsage;
}

/**
 * The same failure for every record of a call that failed as a whole.
 *
 * @example
 * wholeCallFailure(['r1', 'r2'], { kind: 'transient', error: 'HTTP 503', reachedDownstream: true });
 * // { outcomes: Map { r1 → …, r2 → … }, failedWhole: { …, wholeCall: true } }
 */
export const wholeCallFailure = (
  ids: readonly string[],
  failure: Omit<TransientOutcome, 'wholeCall'>,
  apiUsage?: ApiUsage,
): CallOutcome => {
  const outcome: TransientOutcome = { ...failure, wholeCall: true };
  return {
    outcomes: new Map(ids.map((id) => [id, outcome])),
    failedWhole: outcome,
    ...(apiUsage ? { apiUsage } : {}),
  };
};

/**
 * A lone record's single call as one call's outcome: a failure before the call was sent (token, CSRF) is a failure
 * of the whole call; any other is the record's own.
 *
 * @example
 * singleCall('r1', { kind: 'transient', error: 'CSRF token fetch: HTTP 503', reachedDownstream: false });
 * // { outcomes: Map { r1 → …wholeCall }, failedWhole: … }
 */
export const singleCall = (id: string, outcome: DeliveryOutcome, apiUsage?: ApiUsage): CallOutcome =>
  outcome.kind === 'transient' && !outcome.reachedDownstream
    ? wholeCallFailure([id], outcome, apiUsage)
    : { outcomes: new Map([[id, outcome]]), ...(apiUsage ? { apiUsage } : {}) };

/**
 * The records of one call, each id once (two queue messages of one record go once).
 *
 * @throws RangeError when more distinct records than one call may carry are given: slicing is the worker's.
 * @example
 * distinctItems([a, a, b], 50); // [a, b]
 */
export const distinctItems = <R>(items: readonly BatchItem<R>[], callSize: number): BatchItem<R>[] => {
  const distinct = [...new Map(items.map((item) => [item.id, item])).values()];
  if (distinct.length > callSize) {
    throw new RangeError(`one call carries at most ${callSize} records, ${distinct.length} were given`);
  }
  return distinct;
};
