/**
 * The soak's verdicts on the outage hold where it meets batched delivery (docs/behaviour.md#outages-and-holds):
 *
 * - **first delivery after the downstream came back**: seconds from the moment SAP is up again to the first
 *   registration it stores. The hold's next probe is due within OUTAGE_PROBE_SECONDS, the record it takes is
 *   queued by the reconciler, which runs once a period, and the worker's event source gathers a batch for up to
 *   its batching window (`maximumBatchingWindow`, 1 s in serverless.yml, as on AWS) before it invokes the worker,
 *   whose own way to SAP (the poller's receive, a fresh read of the hold and the probe's claim, through the
 *   campaign's faulty store proxies, then the call) takes a moment more: so the goal is one probe period plus one
 *   reconciler period plus that window plus {@link PROBE_CALL_SECONDS}, and more than that fails. (The waits are
 *   the product's; the last second is what a busy 2-core machine takes for one delivery: runs beside a mutation
 *   run measured 0.2 to 0.4 s past the three waits.) Where the time went is shown beside it: the first delivery
 *   call SAP received after it came back (the probe), and that call's answer;
 * - **holds opened while the downstream answered**: openings of an `outage` hold (holdWatch.ts saw them) by a call
 *   the downstream answered in part: some of its records delivered or refused for their content (such as a
 *   Collections answer with some cases upserted and some `UNABLE_TO_LOCK_ROW`). Any is one too many. A hold opened
 *   by a call that failed for every record in it is the rule's (docs/behaviour.md#outages-and-holds: a call that failed whole counts once
 *   per record it carried, so one `$batch` of 50 answered 503 opens it, SAP down or not); which call opened a hold
 *   is read from the records' histories (holdWatch.ts openingCallsInStore). An opening whose call was not found is
 *   counted apart (`unexplained`), judged by the outage alone: on SAP within the outage (and `graceMs` after it, for a
 *   503 noted late) it is the outage's, anywhere else it fails too.
 */
import type { HoldOpening, OpeningCall } from './holdWatch.ts';

export interface HoldFigures {
  /** Seconds from SAP up again to the first registration it stored (null: none, or no outage). */
  firstDeliverySeconds: number | null;
  /**
   * The goal: OUTAGE_PROBE_SECONDS + one reconciler period (RECONCILE_INTERVAL_SECONDS), or the probe cadence kept
   * if longer (at most {@link CADENCE_LIMIT} times those), + the batching window + the probe's own call
   * ({@link PROBE_CALL_SECONDS}).
   */
  firstDeliveryGoalSeconds: number;
  /**
   * The longest gap between probes in the outage's last 30 s: the cadence the machine kept, which stretches the
   * goal's two periods (up to {@link CADENCE_LIMIT} times) on a machine too busy for them.
   */
  probeCadenceSeconds: number;
  /** Seconds from SAP up again to the first delivery call it received (null: none). */
  firstCallSeconds: number | null;
  /** What SAP answered that call (0: no answer). */
  firstCallStatus: number | null;
  /** Hold openings seen, by downstream and reason (`erp outage`: 2). */
  openings: Record<string, number>;
  /** Openings (reason outage) by a call the downstream answered in part: the rule allows none. */
  openedWhileAnswering: number;
  /** Each of those: `crm at 2026-11-28T07:01:02.345Z: 12 answered, 3 failed`. */
  openedWhileAnsweringAt: string[];
  /** Openings (reason outage) by a call that failed for every record in it (the rule's). */
  openedOnFailures: number;
  /** Openings (reason outage) whose call the store did not show (judged by the outage window). */
  unexplained: number;
  /** The outage as it happened (ISO; empty without one). */
  outageFrom: string;
  outageTo: string;
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
  /**
   * When SAP received each request of any sort (ms): while it is down a probe is mostly its CSRF token fetch, failed
   * before any POST, so these, not the delivery calls, show the probes' cadence.
   */
  sapRequestTimes: readonly number[];
  /** Records waiting for SAP when it came back (sales answered 200 during the outage): then a delivery is due. */
  waiting: number;
  probeSeconds: number;
  reconcileSeconds: number;
  /** The SAP worker's event source batching window (serverless.yml `maximumBatchingWindow`). */
  batchingWindowSeconds: number;
  openings: readonly HoldOpening[];
  /** The call that opened each (holdWatch.ts openingCallsInStore; keyed `<downstream> <ms>`). */
  openingCalls: ReadonlyMap<string, OpeningCall>;
  /** For an opening whose call was not found: after SAP came back, this long still counts as the outage. Default 5 s. */
  graceMs?: number;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The span before SAP came back whose probes show the cadence the machine kept (the SIGKILLs pause in it). */
export const CADENCE_SPAN_MS = 30_000;

/**
 * How far the cadence seen may stretch the goal's two periods: a machine slower than this is no longer busy but
 * broken, and so is a mechanism whose probes came only from held messages returning (hidden for half the hold).
 */
export const CADENCE_LIMIT = 4;

/**
 * The probe cadence the machine kept as the outage ended: the longest gap between the requests SAP received (all
 * probes then: a token fetch or a delivery call) in its last {@link CADENCE_SPAN_MS}, the wait before the first of them and after the last one included.
 * On a busy machine a reconciler run over thousands of open records takes longer than its period (the runs follow
 * one another), so probes came every 7-12 s at load 6 against the 2 + 2 s the settings name (soak with `.ci/run`
 * beside): the goal is the cadence that was kept, up to {@link CADENCE_LIMIT} times the settings' periods.
 */
const probeCadenceMs = (requestTimes: readonly number[], from: number, to: number): number => {
  const start = Math.max(from, to - CADENCE_SPAN_MS);
  const times = requestTimes.filter((at) => at >= start && at < to).sort((a, b) => a - b);
  let longest = 0;
  let previous = start;
  for (const at of [...times, to]) {
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return longest;
};

/** The probe's own way to SAP once its wait is over: receive, hold read, claim, call (see the module's comment). */
export const PROBE_CALL_SECONDS = 1;

/**
 * Reads both verdicts from what the campaign saw.
 *
 * @example
 * holdFigures({ outage: { from, to }, createdAt, sapCalls, sapRequestTimes, waiting: 40, probeSeconds: 2, reconcileSeconds: 2,
 *   batchingWindowSeconds: 1, openings: watch.openings(), openingCalls })
 * // { firstDeliverySeconds: 2.7, firstDeliveryGoalSeconds: 6, openedWhileAnswering: 0, kept: true, … }
 */
export const holdFigures = (input: HoldInput): HoldFigures => {
  const graceMs = input.graceMs ?? 5_000;
  const hadOutage = input.outage.from > 0 && input.outage.to >= input.outage.from;
  const periods = input.probeSeconds + input.reconcileSeconds;
  const cadence = hadOutage
    ? probeCadenceMs(input.sapRequestTimes, input.outage.from, input.outage.to) / 1000
    : 0;
  const kept = Math.min(Math.max(periods, cadence), CADENCE_LIMIT * periods);
  const goal = seconds(1000 * (kept + input.batchingWindowSeconds + PROBE_CALL_SECONDS));
  const after = (at: number) => hadOutage && at >= input.outage.to;
  const firstCreated = Math.min(...input.createdAt.filter(after));
  const firstCall = [...input.sapCalls].filter((call) => after(call.at)).sort((a, b) => a.at - b.at)[0];
  const firstDeliverySeconds = Number.isFinite(firstCreated) ? seconds(firstCreated - input.outage.to) : null;
  // Nothing stored after it came back is a failure only when something was waiting for it.
  const recovered =
    !hadOutage || (firstDeliverySeconds === null ? input.waiting === 0 : firstDeliverySeconds <= goal);

  const openings: Record<string, number> = {};
  const whileAnswering: string[] = [];
  let onFailures = 0;
  let unexplained = 0;
  for (const opening of input.openings) {
    const key = `${opening.downstream} ${opening.reason}`;
    openings[key] = (openings[key] ?? 0) + 1;
    if (opening.reason !== 'outage') continue;
    const at = Date.parse(opening.heldSince);
    const where = `${opening.downstream} at ${opening.heldSince}`;
    // The worker's own line says what the opening call was; the records' histories are read only without it (a
    // store fault may have kept an outcome from being written at that instant).
    if (opening.call) {
      if (opening.call.answered > 0)
        whileAnswering.push(`${where}: ${opening.call.answered} of ${opening.call.carried} answered (log)`);
      else onFailures++;
      continue;
    }
    const call = input.openingCalls.get(`${opening.downstream} ${at}`);
    if (call && call.answered > 0) {
      whileAnswering.push(`${where}: ${call.answered} answered, ${call.failed} failed`);
    } else if (call) {
      onFailures++;
    } else {
      unexplained++;
      const down =
        opening.downstream === 'erp' &&
        hadOutage &&
        at >= input.outage.from &&
        at <= input.outage.to + graceMs;
      if (!down) whileAnswering.push(`${where}: its call not found, SAP not down`);
    }
  }
  return {
    firstDeliverySeconds,
    firstDeliveryGoalSeconds: goal,
    probeCadenceSeconds: seconds(cadence * 1000),
    firstCallSeconds: firstCall ? seconds(firstCall.at - input.outage.to) : null,
    firstCallStatus: firstCall ? firstCall.status : null,
    openings,
    openedWhileAnswering: whileAnswering.length,
    openedWhileAnsweringAt: whileAnswering,
    openedOnFailures: onFailures,
    unexplained,
    outageFrom: hadOutage ? new Date(input.outage.from).toISOString() : '',
    outageTo: hadOutage ? new Date(input.outage.to).toISOString() : '',
    recoveredInTime: recovered,
    kept: recovered && whileAnswering.length === 0,
  };
};
