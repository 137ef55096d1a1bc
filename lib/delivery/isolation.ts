/**
 * Test mode's isolation, in one place (docs/API.md, "Test mode"): which downstream answers a record, which hold it
 * sees, whether a failed record goes to the dead-letter queue, the mode its metrics carry, and (for the
 * reconciler) whether it may be a held downstream's probe and where it waits in the `open` index. A test record is
 * answered by the simulators only, never held and never feeding a hold, never a probe, never a dead letter,
 * counted apart; a live record is answered by SAP or Salesforce only. The worker and the reconciler ask these and
 * nothing else (tests/property/testMode.property.test.ts breaks each of the worker's on purpose and sees its
 * invariant fail; tests/reconcile/probeIsolation.test.ts the reconciler's, which lib/delivery/openIsolation.ts
 * holds).
 */
import type { DownstreamHolds } from '../outage/hold.ts';
import type { StatusRecord } from '../records/types.ts';
import type { Downstream } from '../types.ts';
import { type DownstreamCaller, downstreamCaller, simulatorCaller } from './downstreams.ts';
import type { DeliveryMode } from './openIsolation.ts';

export type { DeliveryMode } from './openIsolation.ts';

/**
 * The hold test records see: never held, and it learns nothing from them. A simulator's answers say nothing of SAP
 * or Salesforce, so a test record never opens, closes or feeds a hold (nor the Salesforce allowance it watches), and
 * an outage never changes a test outcome.
 */
const NEVER_HELD: DownstreamHolds = {
  mayDeliver: async () => ({ deliver: true, probe: false }),
  claimProbe: async () => false,
  noteOutcome: async () => undefined,
  noteOutcomes: async () => [],
  noteApiUsage: async () => undefined,
  holdState: async () => ({ held: false }),
};

/**
 * The downstream that answers a mode's records: SAP or Salesforce (live), or their simulator (test).
 *
 * @example
 * const caller = await callerFor('erp', 'test'); // the SAP simulator: no request leaves the worker
 */
export const callerFor = (downstream: Downstream, mode: DeliveryMode): Promise<DownstreamCaller> =>
  mode === 'test' ? Promise.resolve().then(() => simulatorCaller(downstream)) : downstreamCaller(downstream);

/**
 * The hold a mode's records see: the downstream's own (live), or one never held that learns nothing (test).
 *
 * @example
 * const holds = holdsFor('test', downstreamHolds()); // never held
 */
export const holdsFor = (mode: DeliveryMode, live: DownstreamHolds): DownstreamHolds =>
  mode === 'test' ? NEVER_HELD : live;

/**
 * Whether a record that failed goes to the dead-letter queue: a live one does (operators look at it); a test one's
 * failure is what its integrator asked for.
 *
 * @example
 * deadLettered({ test: true }) // false
 */
export const deadLettered = (status: Pick<StatusRecord, 'test'>): boolean => status.test !== true;

/**
 * The mode a record's metrics carry: test records' are metrics of their own, which no alarm reads.
 *
 * @example
 * metricMode({ test: true }) // 'test'
 */
export const metricMode = (status: Pick<StatusRecord, 'test'>): DeliveryMode =>
  status.test ? 'test' : 'live';

// The reconciler's two decisions live apart, without the downstream callers above, so that the reconciler's bundle
// carries no adapter (tests/deploy/bundles.test.ts); they are test mode's isolation as much as these.
export { mayProbe, type OpenPartition, openPartitions } from './openIsolation.ts';
