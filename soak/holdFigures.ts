/**
 * The soak's verdicts on the outage hold where it meets batched delivery (issue 29):
 *
 * - **first delivery after the downstream came back**: seconds from the moment SAP is up again to the first
 *   registration it stores. The hold's next probe is due within OUTAGE_PROBE_SECONDS, and the record it takes is
 *   queued by the reconciler, which runs once a period: so the goal is one probe period plus one reconciler
 *   period, and more than that fails. Where the time went is shown beside it: the first delivery call SAP received
 *   after it came back (the probe), and that call's answer;
 * - **holds opened while the downstream answered**: openings of an `outage` hold on a downstream that was up and
 *   answering (holdWatch.ts saw them). The campaign switches only SAP down, and outside that window spaces the
 *   whole-call failures it plants (chaos.ts) so that a downstream always answers between two of them: a hold that
 *   opens there opened on answers (such as a Collections answer with some cases upserted and some
 *   `UNABLE_TO_LOCK_ROW`), and any is one too many. An opening within `graceMs` after SAP came back is still the
 *   outage's (a 503 answered just before, noted just after).
 */
import type { HoldOpening } from './holdWatch.ts';

export interface HoldFigures {
  /** Seconds from SAP up again to the first registration it stored (null: none, or no outage). */
  firstDeliverySeconds: number | null;
  /** The goal: OUTAGE_PROBE_SECONDS + one reconciler period (RECONCILE_INTERVAL_SECONDS). */
  firstDeliveryGoalSeconds: number;
  /** Seconds from SAP up again to the first delivery call it received (null: none). */
  firstCallSeconds: number | null;
  /** What SAP answered that call (0: no answer). */
  firstCallStatus: number | null;
  /** Hold openings seen, by downstream and reason (`erp outage`: 2). */
  openings: Record<string, number>;
  /** Openings (reason outage) while the downstream was up and answering: the rule allows none. */
  openedWhileAnswering: number;
  /** Each of those: `crm at 2026-11-28T07:01:02.345Z`. */
  openedWhileAnsweringAt: string[];
  /** The first delivery came within the goal (or nothing waited for one). */
  recoveredInTime: boolean;
  /** Both rules held. */
  kept: boolean;
}

export interface HoldInput {
  /** When the SAP outage began and ended (ms; `from` 0: no outage). */
  outage: { from: number; to: number };
  /** When SAP stored each registration (ms). */
  createdAt: readonly number[];
  /** SAP's delivery calls (single POSTs and `$batch`): when each arrived and what it was answered. */
  sapCalls: readonly { at: number; status: number }[];
  /** Records waiting for SAP when it came back (sales answered 200 during the outage): then a delivery is due. */
  waiting: number;
  probeSeconds: number;
  reconcileSeconds: number;
  openings: readonly HoldOpening[];
  /** After SAP came back, openings this long still count as the outage's. Default 5,000 ms. */
  graceMs?: number;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/**
 * Reads both verdicts from what the campaign saw.
 *
 * @example
 * holdFigures({ outage: { from, to }, createdAt, sapCalls, waiting: 40, probeSeconds: 2, reconcileSeconds: 2,
 *   openings: watch.openings() })
 * // { firstDeliverySeconds: 2.7, firstDeliveryGoalSeconds: 4, openedWhileAnswering: 0, kept: true, … }
 */
export const holdFigures = (input: HoldInput): HoldFigures => {
  const goal = input.probeSeconds + input.reconcileSeconds;
  const graceMs = input.graceMs ?? 5_000;
  const hadOutage = input.outage.from > 0 && input.outage.to >= input.outage.from;
  const after = (at: number) => hadOutage && at >= input.outage.to;
  const firstCreated = Math.min(...input.createdAt.filter(after));
  const firstCall = [...input.sapCalls].filter((call) => after(call.at)).sort((a, b) => a.at - b.at)[0];
  const firstDeliverySeconds = Number.isFinite(firstCreated) ? seconds(firstCreated - input.outage.to) : null;
  // Nothing stored after it came back is a failure only when something was waiting for it.
  const recovered =
    !hadOutage || (firstDeliverySeconds === null ? input.waiting === 0 : firstDeliverySeconds <= goal);

  const openings: Record<string, number> = {};
  const whileAnswering: HoldOpening[] = [];
  for (const opening of input.openings) {
    const key = `${opening.downstream} ${opening.reason}`;
    openings[key] = (openings[key] ?? 0) + 1;
    if (opening.reason !== 'outage') continue;
    const at = Date.parse(opening.heldSince);
    const down =
      opening.downstream === 'erp' && hadOutage && at >= input.outage.from && at <= input.outage.to + graceMs;
    if (!down) whileAnswering.push(opening);
  }
  return {
    firstDeliverySeconds,
    firstDeliveryGoalSeconds: goal,
    firstCallSeconds: firstCall ? seconds(firstCall.at - input.outage.to) : null,
    firstCallStatus: firstCall ? firstCall.status : null,
    openings,
    openedWhileAnswering: whileAnswering.length,
    openedWhileAnsweringAt: whileAnswering.map((o) => `${o.downstream} at ${o.heldSince} (${o.seenIn})`),
    recoveredInTime: recovered,
    kept: recovered && whileAnswering.length === 0,
  };
};
