/**
 * Test mode's isolation in the reconciler's reads (re-exported by lib/delivery/isolation.ts, the one place of
 * test/live decisions): a held downstream's probe is a live record only, and test records wait in a partition of
 * the `open` index of their own. Apart from isolation.ts's downstream callers, so that the reconciler's bundle
 * carries no adapter.
 */
import { openKindOf } from '../records/keys.ts';
import type { StatusRecord } from '../records/types.ts';
import type { RecordKind } from '../types.ts';

/** Whether records are delivered (`live`) or answered by the simulators (`test`). */
export type DeliveryMode = 'live' | 'test';

/**
 * Whether a record may be its held downstream's probe: a live one only. A simulator's answer says nothing of SAP
 * or Salesforce, so a probe that took a test record would keep the hold open while SAP is back.
 *
 * @example
 * mayProbe({ test: true }) // false
 */
export const mayProbe = (status: Pick<StatusRecord, 'test'>): boolean => status.test !== true;

/** One partition of the `open` index for a kind: the records of one mode. */
export interface OpenPartition {
  /** Its `openKind` (lib/records/keys.ts openKindOf). */
  openKind: string;
  mode: DeliveryMode;
  /** Whether its records wait out their downstream's hold (live) or never see one (test). */
  held: boolean;
}

/**
 * The `open` index's partitions of a kind, live first: live records under the kind, test records apart, so that
 * the probe of a held downstream reads live records only, however many test records are open, and test records
 * go on being queued again while the live downstream is held. (A test record written before it had a partition of
 * its own waits among the live ones: `mayProbe` keeps it from being a probe.)
 *
 * @example
 * openPartitions('caseRecord') // [{ openKind: 'caseRecord', mode: 'live', held: true }, { openKind: 'caseRecord#test', … }]
 */
export const openPartitions = (kind: RecordKind): OpenPartition[] => [
  { openKind: openKindOf(kind, false), mode: 'live', held: true },
  { openKind: openKindOf(kind, true), mode: 'test', held: false },
];
