/** Types shared by the downstream adapters (lib/downstream/erp, lib/downstream/crm) and the worker that uses them. */

/**
 * What a delivery adapter reports for one record.
 * `reachedDownstream` is true when the delivery request itself (not a token or CSRF fetch) was sent
 * and the downstream answered or timed out; the status record counts those as attempts.
 */
export type DeliveryOutcome =
  | { kind: 'delivered'; downstreamId?: string; reachedDownstream: true }
  | {
      kind: 'transient';
      error: string;
      reachedDownstream: boolean;
      /** Never sent: an earlier call of the same delivery failed as a whole (see lib/downstream/inChunks.ts). */
      notSent?: true;
    }
  | { kind: 'permanent'; error: string; reachedDownstream: boolean };

/** One record of a batched delivery: `id` is what the single call takes (RegistrationId, CrmId). */
export interface BatchItem<R> {
  id: string;
  record: R;
}

/**
 * What a batched delivery reports: one outcome per distinct id, each decided as a single call would decide it
 * (a failure of the whole call counts for every record in it).
 */
export interface BatchDelivery {
  outcomes: Map<string, DeliveryOutcome>;
}
