import { type OutageSettings, outageSettings } from '../settings/settings.ts';
import type { TableReader } from '../store/statusIndex.ts';
import { MAX_WRITE_ROUNDS } from './constants.ts';
import { claimProbeWrite, readHold, readHolds, writeHold } from './holdStore.ts';
import { failureRateOf, type HoldEvent, holdAfterAll } from './rules.ts';
import type {
  DeliveryPermit,
  Downstream,
  HoldRecord,
  HoldState,
  HoldTransition,
  NotedOutcome,
} from './types.ts';

/** One worker instance's view of the downstreams' holds (see {@link createDownstreamHolds}). */
export interface DownstreamHolds {
  /**
   * Whether a delivery call may go out now: yes, yes as the period's one probe, or wait until a time. `fresh`: read
   * the hold now rather than trust this instance's cache (before each later call of a batch, so a hold another
   * instance opened meanwhile stops it).
   */
  mayDeliver(downstream: Downstream, now: Date, options?: { fresh?: boolean }): Promise<DeliveryPermit>;
  /** Claims the one probe of the current period; true for exactly one caller among all instances. */
  claimProbe(downstream: Downstream, now: Date): Promise<boolean>;
  /** Counts one delivery call's outcome; returns the hold's opening or closing when it caused one. */
  noteOutcome(downstream: Downstream, outcome: NotedOutcome, now: Date): Promise<HoldTransition | undefined>;
  /**
   * Counts the outcomes of one batched call (its parts in order, or one outcome for a failure of the whole call)
   * in one write; returns the openings and closings they caused, in order.
   */
  noteOutcomes(
    downstream: Downstream,
    outcomes: readonly NotedOutcome[],
    now: Date,
  ): Promise<HoldTransition[]>;
  /** Counts a Salesforce answer's API usage alone (CRM). */
  noteApiUsage(used: number, allowed: number, now: Date): Promise<HoldTransition | undefined>;
  /** The hold as this instance knows it (`fresh`: read it now). */
  holdState(downstream: Downstream, options?: { fresh?: boolean; now?: Date }): Promise<HoldState>;
}

/** What a hold means to its readers; its failure rate only given the window (the workers'). */
const stateOf = (hold: HoldRecord, rateWindow?: number): HoldState => {
  if (hold.held)
    return { held: true, heldSince: hold.heldSince, reason: hold.reason, nextProbeAt: hold.probeAt };
  const failureRate = rateWindow === undefined ? undefined : failureRateOf(hold, rateWindow);
  return {
    held: false,
    ...(hold.closedAt ? { closedAt: hold.closedAt } : {}),
    ...(failureRate === undefined ? {} : { failureRate }),
  };
};

/**
 * The downstream holds (docs/behaviour.md#outages-and-holds) for one worker instance: the
 * hold items in the records table (lib/outage/holdStore.ts, conditional writes only), the rules
 * (lib/outage/rules.ts), and a short cache of what this instance last read.
 *
 * What the cache saves: a call that changes nothing (a success with no failure streak while the downstream's last
 * OUTAGE_RATE_WINDOW calls were all answered, the usual case) costs no further read and no write of the hold; any
 * other call costs one conditional write, computed over the hold as last read (the permit's read just before the
 * call), read again only when another instance wrote first. Every change is written conditionally on the version it
 * was computed from, so the cache never makes two instances disagree. The worker asks for its permits fresh (one
 * consistent read per call), so no call but the probe goes out to a downstream another instance has held; what the
 * cache still risks, for at most `cacheSeconds` after another instance wrote, is a success that does not reset a
 * streak another instance began, nor enter the window of recent calls. A probe's grant is always a conditional
 * write, so probe spacing does not depend on the cache.
 *
 * @example
 * const holds = createDownstreamHolds();
 * const permit = await holds.mayDeliver('erp', new Date());
 * if (permit.deliver) {
 *   const transition = await holds.noteOutcome('erp', { recordId, kind: 'transient', probe: permit.probe }, new Date());
 *   if (transition) reportDownstreamHeld(transition.downstream, transition.change === 'opened');
 * }
 */
export const createDownstreamHolds = (settings: OutageSettings = outageSettings()): DownstreamHolds => {
  const cache = new Map<Downstream, { hold: HoldRecord; readAt: number }>();

  const remember = (hold: HoldRecord, now: Date): HoldRecord => {
    cache.set(hold.downstream, { hold, readAt: now.getTime() });
    return hold;
  };
  const fresh = async (downstream: Downstream, now: Date) => remember(await readHold(downstream), now);
  /** The hold as this instance knows it: as cached, else read now. */
  const known = async (downstream: Downstream, now: Date): Promise<HoldRecord> => {
    const cached = cache.get(downstream);
    const age = cached ? now.getTime() - cached.readAt : Number.POSITIVE_INFINITY;
    // A clock moved back (tests) counts as stale too.
    if (cached && age >= 0 && age < settings.cacheSeconds * 1000) return cached.hold;
    return fresh(downstream, now);
  };

  const apply = async (
    downstream: Downstream,
    events: readonly HoldEvent[],
    now: Date,
  ): Promise<HoldTransition[]> => {
    // Nothing to write by what this instance knows: no further read, no write (see the cache above). Else the change
    // is written over the version known, and computed again on a fresh read only if someone wrote first.
    let current = await known(downstream, now);
    for (let round = 0; round < MAX_WRITE_ROUNDS; round++) {
      if (round > 0) current = await fresh(downstream, now);
      const { next, transitions } = holdAfterAll(current, events, now, settings);
      if (next === current) return [];
      if (await writeHold(current, next)) {
        remember(next, now);
        return transitions;
      }
    }
    throw new Error(`hold of ${downstream}: ${MAX_WRITE_ROUNDS} concurrent writes in a row, gave up`);
  };

  const claimProbe = async (downstream: Downstream, now: Date): Promise<boolean> => {
    const nextProbeAt = new Date(now.getTime() + settings.probeSeconds * 1000).toISOString();
    const written = await claimProbeWrite(downstream, now, nextProbeAt);
    if (written) remember(written, now);
    else cache.delete(downstream);
    return written !== undefined;
  };

  const waitFor = (hold: HoldRecord): DeliveryPermit => ({
    deliver: false,
    until: hold.probeAt ?? '',
    heldSince: hold.heldSince ?? '',
    reason: hold.reason ?? 'outage',
  });

  return {
    async mayDeliver(downstream, now, options = {}) {
      const hold = options.fresh ? await fresh(downstream, now) : await known(downstream, now);
      if (!hold.held) return { deliver: true, probe: false };
      // Not due by what this instance knows: wait, without a write.
      if (hold.probeAt && Date.parse(hold.probeAt) > now.getTime()) return waitFor(hold);
      if (await claimProbe(downstream, now)) return { deliver: true, probe: true };
      const current = await fresh(downstream, now);
      return current.held ? waitFor(current) : { deliver: true, probe: false };
    },
    claimProbe,
    noteOutcome: async (downstream, outcome, now) => (await apply(downstream, [outcome], now))[0],
    noteOutcomes: (downstream, outcomes, now) => apply(downstream, outcomes, now),
    noteApiUsage: async (used, allowed, now) =>
      (await apply('crm', [{ kind: 'usage', apiUsage: { used, allowed } }], now))[0],
    async holdState(downstream, options = {}) {
      const now = options.now ?? new Date();
      const hold = options.fresh ? await fresh(downstream, now) : await known(downstream, now);
      return stateOf(hold, settings.rateWindow);
    },
  };
};

let containerHolds: DownstreamHolds | undefined;

/**
 * The holds of this Lambda container (or local worker process), created on first use: one cache per instance.
 *
 * @example
 * const permit = await downstreamHolds().mayDeliver('crm', new Date());
 */
export const downstreamHolds = (): DownstreamHolds => {
  containerHolds ??= createDownstreamHolds();
  return containerHolds;
};

/**
 * Both downstreams' holds as they stand, in one read: for the reconciler's per-minute `downstreamHeld` metric and
 * `npm run records -- --counts` (which passes its own reader: see readHolds).
 *
 * @example
 * const { erp } = await holdStates(); // { held: true, heldSince: '2026-11-27T03:00:00.000Z', reason: 'outage', nextProbeAt: ... }
 */
export const holdStates = async (
  options: { reader?: TableReader } = {},
): Promise<Record<Downstream, HoldState>> => {
  const { erp, crm } = await readHolds(options.reader);
  // What operators and the metric see: whether held, and since when; the last close and the failure rate matter to
  // the workers only.
  const { closedAt: _erpClosed, ...erpState } = stateOf(erp);
  const { closedAt: _crmClosed, ...crmState } = stateOf(crm);
  return { erp: erpState, crm: crmState };
};
