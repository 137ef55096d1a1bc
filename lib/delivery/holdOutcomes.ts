import type { Logger } from '@aws-lambda-powertools/logger';
import type { DeliveryOutcome } from '../downstream/types.ts';
import { reportDownstreamHeld } from '../observability/metrics.ts';
import type { DownstreamHolds } from '../outage/hold.ts';
import type { ApiUsage, Downstream, HoldState, NotedOutcome } from '../outage/types.ts';

/**
 * What the hold learns from one call: a call in which any part was answered (delivered, or refused for its content)
 * shows that the downstream is up, so only its answered parts are noted (they end a failure streak and never open an
 * `outage` hold; its transient parts are those records' own failures, which spend their own tries). A call with no
 * part answered (it failed whole, or every part was transient) is one failure per record it carried: the failures in
 * a row count whatever the records, so an outage at a quiet hour is held like any other. Either way the call itself
 * counts once in the downstream's window of recent calls (lib/outage/rules.ts, holdAfterAll). Failures that never reached
 * the downstream count too: while SAP is down, its CSRF fetch fails. Every event carries the call's API usage
 * (Salesforce), so an allowance nearly spent holds the CRM and a probe showing it below the share frees it. The
 * order of the parts never matters.
 *
 * @example
 * notedOutcomesOf(['r1', 'r2'], outcomes, { probe: false }) // [{ recordId: 'r1', kind: 'delivered', probe: false }]
 */
export const notedOutcomesOf = (
  ids: readonly string[],
  outcomes: ReadonlyMap<string, DeliveryOutcome>,
  call: { probe: boolean; apiUsage?: ApiUsage },
): NotedOutcome[] => {
  const parts = ids.flatMap((id) => {
    const outcome = outcomes.get(id);
    return outcome ? [{ recordId: id, kind: outcome.kind }] : [];
  });
  const answered = parts.filter(({ kind }) => kind !== 'transient');
  return (answered.length > 0 ? answered : parts).map((part) => ({
    ...part,
    probe: call.probe,
    ...(call.apiUsage ? { apiUsage: call.apiUsage } : {}),
  }));
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
  call: {
    probe: boolean;
    at: Date;
    log: Logger;
    /** What the call was, for the opening's log line: the records it carried and the parts the downstream answered. */
    parts?: { carried: number; answered: number };
  },
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
      // The call that opened it, so whoever reads the log sees it was a call no part of which was answered.
      if (opened)
        log.warn('downstream held: records wait without spending tries', {
          ...line,
          ...(call.parts ? { callRecords: call.parts.carried, answeredParts: call.parts.answered } : {}),
        });
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
