/**
 * The soak's figures of the SAP outage and of batching: what reached SAP while it was down against the probes
 * the hold allows (docs/behaviour.md#outages-and-holds), the records sent during it that ended
 * `failed` (none may), and how many records each delivery call carried.
 */
import type { SalesforceDeliveryCall } from '../sandbox/salesforceCollections.ts';
import type { SapDeliveryCall } from '../sandbox/sapBatch.ts';
import type { Outcome } from './ledger.ts';

export interface OutageFigures {
  /** How long SAP was down (0: no outage). */
  seconds: number;
  /** Every request that reached SAP while down (delivery calls and CSRF token fetches alike). */
  calls: number;
  /** Of those, delivery calls (single POSTs and `$batch`). */
  deliveryCalls: number;
  /**
   * Calls the hold allows while down: one probe per OUTAGE_PROBE_SECONDS (and one at the start), plus the
   * OUTAGE_AFTER_FAILURES failures that open it and one call per worker in flight as it opens.
   */
  probesAllowed: number;
  /** Records answered 200 while SAP was down. */
  acceptedDuring: number;
  /** Of those, records whose outcome was `failed`: the contract allows none. */
  failedDuring: number;
  /** When each of those calls came, in seconds into the outage. */
  callSeconds: number[];
  /** Whether the outage's rules held: calls within the probes allowed, nothing sent during it failed. */
  kept: boolean;
}

/**
 * Reads the outage's figures from what the campaign saw.
 *
 * @example
 * outageFigures({ from, to, calls: 14, deliveryCalls: 12, seconds: 90, probeSeconds: 5, afterFailures: 5,
 *   inFlight: 2, answeredAt, outcomes }) // { probesAllowed: 26, failedDuring: 0, kept: true, … }
 */
export const outageFigures = (input: {
  from: number;
  to: number;
  calls: number;
  deliveryCalls: number;
  callSeconds?: number[];
  seconds: number;
  probeSeconds: number;
  afterFailures: number;
  inFlight: number;
  /** When each record (by token) was first answered 200. */
  answeredAt: Map<string, number>;
  outcomes: Map<string, Outcome>;
}): OutageFigures => {
  if (input.seconds === 0 || input.from === 0) {
    return {
      seconds: 0,
      calls: 0,
      deliveryCalls: 0,
      probesAllowed: 0,
      acceptedDuring: 0,
      failedDuring: 0,
      callSeconds: [],
      kept: true,
    };
  }
  const probesAllowed =
    Math.floor(input.seconds / input.probeSeconds) + 1 + input.afterFailures + input.inFlight;
  const during = [...input.answeredAt].filter(([, at]) => at >= input.from && at <= input.to);
  const failedDuring = during.filter(([token]) => input.outcomes.get(token) === 'failed').length;
  return {
    seconds: input.seconds,
    calls: input.calls,
    deliveryCalls: input.deliveryCalls,
    probesAllowed,
    acceptedDuring: during.length,
    failedDuring,
    callSeconds: input.callSeconds ?? [],
    kept: input.calls <= probesAllowed && failedDuring === 0,
  };
};

export interface DeliveryCallFigures {
  sapCalls: number;
  sapRecords: number;
  sapBatchCalls: number;
  salesforceCalls: number;
  salesforceRecords: number;
  salesforceCollectionsCalls: number;
}

/**
 * Delivery calls per downstream and the records they carried (`GET /_sandbox/calls` of each sandbox).
 *
 * @example
 * deliveryCallFigures(sapDeliveryCalls(sap.requests, sap.servicePath), salesforceDeliveryCalls(sf.requests))
 */
export const deliveryCallFigures = (
  sap: readonly SapDeliveryCall[],
  salesforce: readonly SalesforceDeliveryCall[],
): DeliveryCallFigures => ({
  sapCalls: sap.length,
  sapRecords: sap.reduce((n, call) => n + call.registrations, 0),
  sapBatchCalls: sap.filter((call) => call.kind === 'batch').length,
  salesforceCalls: salesforce.length,
  salesforceRecords: salesforce.reduce((n, call) => n + call.cases, 0),
  salesforceCollectionsCalls: salesforce.filter((call) => call.kind === 'collections').length,
});
