import { errorSummary, logger } from '../observability/logger.ts';
import { DOWNSTREAM_OF_KIND } from '../outage/constants.ts';
import { type DownstreamHolds, downstreamHolds } from '../outage/hold.ts';
import type { RecordStatus } from '../records/types.ts';
import type { RecordKind } from '../types.ts';

/**
 * Since when the downstream of these records has been held (docs/behaviour.md#outages-and-holds), for the status
 * look-up of records still `accepted`: undefined when it is not held, and without a read when none of them is
 * `accepted` (a settled record never shows it). The read is the hold module's own: one GetItem of the hold item,
 * then trusted for `OUTAGE_STATE_CACHE_SECONDS` by this instance. The field is an extra: when the hold cannot be
 * read, the look-up still answers, without it, and a warning is logged.
 *
 * @example
 * await heldSinceOf('salesRegistration', [status]) // '2026-11-27T03:00:00.000Z' while SAP is held
 */
export const heldSinceOf = async (
  kind: RecordKind,
  statuses: readonly { status: RecordStatus }[],
  holds: DownstreamHolds = downstreamHolds(),
): Promise<string | undefined> => {
  if (!statuses.some((entry) => entry.status === 'accepted')) return undefined;
  const downstream = DOWNSTREAM_OF_KIND[kind];
  try {
    const state = await holds.holdState(downstream);
    return state.held ? state.heldSince : undefined;
  } catch (error) {
    logger.warn('hold not read: status answered without heldSince', { downstream, ...errorSummary(error) });
    return undefined;
  }
};
