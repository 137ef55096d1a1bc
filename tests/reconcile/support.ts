/**
 * What the reconciler's hold tests share: a hold opened as workers open it, and records as a worker leaves them
 * after a failed probe (docs/behaviour.md#outages-and-holds).
 */
import { heldVisibilitySeconds } from '../../lib/outage/heldVisibility.ts';
import type { DownstreamHolds } from '../../lib/outage/hold.ts';
import type { Downstream } from '../../lib/outage/types.ts';
import { dueAfter } from '../../lib/records/due.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';

export const PROBE_SECONDS = 30;
export const RECONCILE_AFTER_SECONDS = 300;

export const at = (iso: string) => new Date(iso);

/**
 * Opens a downstream's hold as workers do: five transient failures of two records, a second apart from `from`.
 *
 * @returns the hold's `heldSince`.
 */
export const openHold = async (holds: DownstreamHolds, downstream: Downstream, from: string) => {
  const start = Date.parse(from);
  for (const [index, recordId] of ['a', 'b', 'a', 'b', 'a'].entries())
    await holds.noteOutcome(downstream, { recordId, kind: 'transient' }, new Date(start + index * 1000));
  const state = await holds.holdState(downstream, { fresh: true, now: new Date(start + 5000) });
  return state.held ? (state.heldSince ?? '') : '';
};

/**
 * A record (a case, unless `changes` say otherwise) as a worker leaves it after its failed probe at `triedAt` in a
 * hold held since `heldSince` (lib/delivery/recordOutcome.ts): `accepted`, its try given back, due again half the
 * hold's age later, plus RECONCILE_AFTER_SECONDS.
 */
export const afterFailedProbe = (
  heldSince: string,
  triedAt: string,
  changes: Partial<StatusRecord> = {},
): StatusRecord => {
  const hidden = heldVisibilitySeconds(
    { heldSince, until: dueAfter(at(triedAt), PROBE_SECONDS) },
    at(triedAt),
    PROBE_SECONDS,
  );
  return acceptedCase({
    acceptedAt: '2026-11-22T05:50:00.000Z',
    updatedAt: triedAt,
    attempts: 1,
    tries: 0,
    error: 'HTTP 503',
    dueAt: dueAfter(at(triedAt), hidden + RECONCILE_AFTER_SECONDS),
    ...changes,
  });
};

/** The changes that make a case status record a sales registration's. */
export const sale = (changes: Partial<StatusRecord>): Partial<StatusRecord> => ({
  kind: 'salesRegistration',
  statusKey: 'salesRegistration#accepted',
  openKind: 'salesRegistration',
  ...changes,
});
