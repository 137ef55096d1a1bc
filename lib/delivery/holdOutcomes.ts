import type { Logger } from '@aws-lambda-powertools/logger';
import type { DeliveryOutcome } from '../downstream/types.ts';
import { reportDownstreamHeld } from '../observability/metrics.ts';
import type { DownstreamHolds } from '../outage/hold.ts';
import type { ApiUsage, Downstream, HoldState, NotedOutcome } from '../outage/types.ts';

/**
 * What the hold learns from one batched delivery: one outcome per record the downstream decided, and ONE for a
 * failure of a whole call (the adapters give every record of a failed call the same outcome object), so that one
 * failed call of 50 records counts as one failure, not fifty that would open the hold at once. Failures that never
 * reached the downstream count too: while SAP is down, its CSRF fetch fails. Every event carries the call's API
 * usage (Salesforce), so an allowance nearly spent holds the CRM and a probe showing it below the share frees it.
 *
 * @example
 * notedOutcomesOf(['r1', 'r2'], outcomes, { probe: false }) // [{ recordId: 'r1', kind: 'transient', probe: false }]
 */
export const notedOutcomesOf = (
  ids: readonly string[],
  outcomes: ReadonlyMap<string, DeliveryOutcome>,
  call: { probe: boolean; apiUsage?: ApiUsage },
): NotedOutcome[] => {
  const counted = new Set<DeliveryOutcome>();
  const noted: NotedOutcome[] = [];
  for (const id of ids) {
    const outcome = outcomes.get(id);
    if (!outcome || counted.has(outcome)) continue;
    counted.add(outcome);
    noted.push({
      recordId: id,
      kind: outcome.kind,
      probe: call.probe,
      ...(call.apiUsage ? { apiUsage: call.apiUsage } : {}),
    });
  }
  return noted;
};

/**
 * Counts a batched delivery's outcomes in the downstream's hold, reports each opening or closing (metric
 * `downstreamHeld` and one log line), and answers the hold as it stands after them: held means the records whose
 * call failed spend no try (a failed probe, or calls under way when the hold opened). Should the hold not be
 * writable, the outcomes are still recorded: a probe's failure is then taken as held (no try spent), any other as
 * not (the record's own tries, as before holds existed).
 *
 * @example
 * const hold = await noteDelivery(holds, 'erp', noted, { probe: permit.probe, at, log });
 * if (hold.held) giveBackTries();
 */
export const noteDelivery = async (
  holds: DownstreamHolds,
  downstream: Downstream,
  noted: readonly NotedOutcome[],
  call: { probe: boolean; at: Date; log: Logger },
): Promise<HoldState> => {
  const { at, log } = call;
  try {
    const transitions = noted.length > 0 ? await holds.noteOutcomes(downstream, noted, at) : [];
    for (const transition of transitions) {
      const opened = transition.change === 'opened';
      reportDownstreamHeld(transition.downstream, opened);
      const line = {
        downstream: transition.downstream,
        reason: transition.reason,
        heldSince: transition.heldSince,
      };
      if (opened) log.warn('downstream held: records wait without spending tries', line);
      else log.info('downstream hold closed', { ...line, heldSeconds: transition.heldSeconds });
    }
    return await holds.holdState(downstream, { now: at });
  } catch (error) {
    log.error('downstream hold not updated', {
      downstream,
      error: error instanceof Error ? error.message : String(error),
    });
    return call.probe ? { held: true, heldSince: at.toISOString() } : { held: false };
  }
};
