/** Types shared by the downstream adapters (lib/downstream/erp, lib/downstream/crm) and the worker that uses them. */

/**
 * What a delivery adapter reports for one record.
 * `reachedDownstream` is true when the delivery request itself (not a token or CSRF fetch) was sent
 * and the downstream answered or timed out; the status record counts those as attempts.
 */
export type DeliveryOutcome =
  | { kind: 'delivered'; downstreamId?: string; reachedDownstream: true }
  | { kind: 'transient'; error: string; reachedDownstream: boolean }
  | { kind: 'permanent'; error: string; reachedDownstream: boolean };
