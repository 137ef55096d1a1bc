import type { OutageSettings } from '../settings/settings.ts';
import { API_USAGE_REFRESH_SECONDS, FAULTLESS_CHANCE_BOUND } from './constants.ts';
import type { ApiUsage, Downstream, HoldReason, HoldRecord, HoldTransition, NotedOutcome } from './types.ts';

/** What the hold learns from one answer (or one failed call) of its downstream. */
export type HoldEvent = Omit<NotedOutcome, 'recordId' | 'kind'> & {
  recordId?: string;
  /** `usage`: an API usage reading alone (an answer that decided no record). */
  kind: NotedOutcome['kind'] | 'usage';
};

/** The hold after an event, and the change to report; `next` is `current` itself when nothing changes. */
export interface HoldStep {
  next: HoldRecord;
  transition?: HoldTransition;
}

/** The hold of a downstream that has never been written. */
export const openingHold = (downstream: Downstream): HoldRecord => ({
  downstream,
  held: false,
  failures: 0,
  version: 0,
});

const isHigh = (usage: ApiUsage | undefined, share: number): boolean | undefined =>
  usage && usage.allowed > 0 ? usage.used / usage.allowed >= share : undefined;

const later = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000).toISOString();

// `firstFailedRecord` and `severalRecords` were the streak's two-records rule; items written before it went keep them
// until their next write.
const noStreak = { failures: 0, firstFailedRecord: undefined, severalRecords: undefined } as const;

/** `current` with `fields` changed: a new version, the condition of the next write. */
const changedHold = (current: HoldRecord, fields: Partial<HoldRecord>, now: Date): HoldRecord => ({
  ...current,
  ...fields,
  version: current.version + 1,
  updatedAt: now.toISOString(),
});

/** The hold opened at `now` for `reason`, its first probe one period later. */
const opening = (current: HoldRecord, reason: HoldReason, now: Date, probeSeconds: number): HoldStep => {
  const at = now.toISOString();
  return {
    next: changedHold(
      current,
      {
        ...noStreak,
        held: true,
        reason,
        heldSince: at,
        closedAt: undefined,
        probeAt: later(now, probeSeconds),
      },
      now,
    ),
    transition: { downstream: current.downstream, change: 'opened', reason, heldSince: at },
  };
};

/** The calls of a window that failed whole. */
const failedIn = (recentCalls: string): number => recentCalls.split('1').length - 1;

/**
 * The share of a downstream's last `window` calls that failed whole, or undefined while fewer are counted.
 *
 * @example
 * failureRateOf({ recentCalls: '0110' }, 4) // 0.5
 * failureRateOf({ recentCalls: '01' }, 4) // undefined
 */
export const failureRateOf = (hold: Pick<HoldRecord, 'recentCalls'>, window: number): number | undefined => {
  const recent = (hold.recentCalls ?? '').slice(-window);
  return recent.length < window ? undefined : failedIn(recent) / window;
};

/**
 * One call of a downstream that is not held, counted in its window (`recentCalls`): `failedWhole` when no part of it
 * was answered. Once `rateWindow` calls are counted since the hold last closed, a failed share at or above
 * `failureRate` opens it (`outage`): a downstream failing every other call is held though its failures never come
 * `afterFailures` in a row. Calls counted before the hold closed never reopen it: one record's own failure after an
 * outage ended does not. Nothing changes (`next` is `current`) when the window stays as it was: a success on a
 * downstream whose last calls were all answered.
 *
 * @example
 * const { next, transition } = holdAfterCall(current, true, new Date(), settings);
 */
export const holdAfterCall = (
  current: HoldRecord,
  failedWhole: boolean,
  now: Date,
  settings: Pick<OutageSettings, 'probeSeconds' | 'failureRate' | 'rateWindow'>,
): HoldStep => {
  const { rateWindow } = settings;
  const recentCalls = `${current.recentCalls ?? ''}${failedWhole ? '1' : '0'}`.slice(-rateWindow);
  const callsSinceClose = Math.min(rateWindow, (current.callsSinceClose ?? 0) + 1);
  if (callsSinceClose === current.callsSinceClose && recentCalls === current.recentCalls)
    return { next: current };
  const counted = changedHold(current, { recentCalls, callsSinceClose }, now);
  if (callsSinceClose < rateWindow || failedIn(recentCalls) < settings.failureRate * rateWindow)
    return { next: counted };
  return opening(counted, 'outage', now, settings.probeSeconds);
};

/**
 * Whether a record's transient failure alone in a call is given back, and the record's chance after it: the chance
 * that a record with no fault of its own fails alone as often as it has, on this downstream. Each such failure
 * multiplies it by the downstream's failure rate when the call went out (`failureRate`: the share of its last calls
 * that failed whole); while it stays at or above {@link FAULTLESS_CHANCE_BOUND} the failure says nothing of the
 * record and spends no try. A downstream whose last calls all answered makes it 0 at the first failure, so a record
 * failing alone there spends its tries as before; a record that keeps failing while the others' calls mostly succeed
 * falls below the bound after a few failures and spends its own. Until the rate is known (fewer calls counted than
 * the window) a failure is the record's own and leaves the chance as it was.
 *
 * @example
 * loneFailure(1, 0.5) // { givenBack: true, chance: 0.5 }
 * loneFailure(1, 0) // { givenBack: false, chance: 0 }
 */
export const loneFailure = (
  chance: number,
  failureRate: number | undefined,
): { givenBack: boolean; chance: number } => {
  if (failureRate === undefined) return { givenBack: false, chance };
  const after = chance * failureRate;
  return { givenBack: after >= FAULTLESS_CHANCE_BOUND, chance: after };
};

/**
 * The hold's rules, without the store: what one event does to a downstream's hold at `now`.
 *
 * - Not held: a transient failure extends the streak, whatever its record (a call that failed whole is one event per
 *   record it carried: lib/delivery/holdOutcomes.ts); at `afterFailures` failures in a row it opens (`outage`), so
 *   an outage at a quiet hour with one record waiting is held like any other. An answer (delivered, or refused for
 *   good: the downstream decided, so it is not down for everyone) ends the streak. An API usage at or above the share
 *   opens it (`api-usage`).
 * - Held: an answer closes it, unless it shows (or, for an `api-usage` hold, fails to show) usage below the share;
 *   a transient failure (a failed probe) changes nothing. The first probe is due one period after opening.
 *
 * @example
 * const { next, transition } = holdAfter(current, { kind: 'transient', recordId: 'a1' }, new Date(), settings);
 */
export const holdAfter = (
  current: HoldRecord,
  event: HoldEvent,
  now: Date,
  settings: Pick<OutageSettings, 'afterFailures' | 'probeSeconds' | 'apiUsageShare'>,
): HoldStep => {
  const at = now.toISOString();
  const high = isHigh(event.apiUsage, settings.apiUsageShare);
  const answered = event.kind === 'delivered' || event.kind === 'permanent';
  const changed = (fields: Partial<HoldRecord>) => changedHold(current, fields, now);
  const open = (reason: HoldReason) => opening(current, reason, now, settings.probeSeconds);

  if (current.held) {
    if (high) {
      return current.reason === 'api-usage' ? { next: current } : { next: changed({ reason: 'api-usage' }) };
    }
    const mayClose =
      current.reason === 'api-usage' ? high === false && (answered || event.kind === 'usage') : answered;
    if (!mayClose) return { next: current };
    const heldSince = current.heldSince ?? at;
    return {
      next: changed({
        ...noStreak,
        held: false,
        reason: undefined,
        probeAt: undefined,
        closedAt: at,
        callsSinceClose: 0,
      }),
      transition: {
        downstream: current.downstream,
        change: 'closed',
        reason: current.reason ?? 'outage',
        heldSince,
        closedAt: at,
        heldSeconds: Math.max(0, Math.round((now.getTime() - Date.parse(heldSince)) / 1000)),
      },
    };
  }
  if (high) return open('api-usage');
  if (answered) return current.failures === 0 ? { next: current } : { next: changed(noStreak) };
  if (event.kind !== 'transient' || !event.recordId) return { next: current };
  const failures = current.failures + 1;
  if (failures >= settings.afterFailures) return open('outage');
  return { next: changed({ failures }) };
};

/**
 * The hold with the newest API usage reading of `events` kept for the console (`apiUsage`, with when it was read):
 * on a hold written anyway (`next` is not `current`) at no cost; on its own only when none is stored yet or the
 * stored one is API_USAGE_REFRESH_SECONDS old, so that a stream of successes (which otherwise write nothing) costs
 * at most one write of it a minute.
 *
 * @example
 * withApiUsage(current, current, [{ kind: 'usage', apiUsage: { used: 18, allowed: 5000 } }], now)
 * // { ...current, apiUsage: { used: 18, allowed: 5000, at: now }, version: current.version + 1 }
 */
export const withApiUsage = (
  current: HoldRecord,
  next: HoldRecord,
  events: readonly HoldEvent[],
  now: Date,
): HoldRecord => {
  const usage = events.findLast((event) => event.apiUsage)?.apiUsage;
  if (!usage) return next;
  const reading = { used: usage.used, allowed: usage.allowed, at: now.toISOString() };
  if (next !== current) return { ...next, apiUsage: reading };
  const storedAt = current.apiUsage ? Date.parse(current.apiUsage.at) : Number.NaN;
  // A clock moved back (tests) counts as stale too, as the holds' cache does.
  const age = now.getTime() - storedAt;
  const fresh = age >= 0 && age < API_USAGE_REFRESH_SECONDS * 1000;
  return fresh ? current : changedHold(current, { apiUsage: reading }, now);
};

/**
 * {@link holdAfter} for several events in the order given (the parts of one call, batched or not), then the call
 * itself in the downstream's window ({@link holdAfterCall}): one write for all.
 *
 * @example
 * const { next, transitions } = holdAfterAll(current, parts, new Date(), settings);
 */
export const holdAfterAll = (
  current: HoldRecord,
  events: readonly HoldEvent[],
  now: Date,
  settings: Pick<
    OutageSettings,
    'afterFailures' | 'probeSeconds' | 'apiUsageShare' | 'failureRate' | 'rateWindow'
  >,
): { next: HoldRecord; transitions: HoldTransition[] } => {
  let next = current;
  const transitions: HoldTransition[] = [];
  const steps = (step: HoldStep) => {
    next = step.next;
    if (step.transition) transitions.push(step.transition);
  };
  for (const event of events) steps(holdAfter(next, event, now, settings));
  // The call itself, once, in the window: not while held (a failed probe), nor a reading of API usage alone.
  const records = events.filter((event) => event.recordId !== undefined);
  if (records.length > 0 && !next.held)
    steps(
      holdAfterCall(
        next,
        records.every(({ kind }) => kind === 'transient'),
        now,
        settings,
      ),
    );
  return { next: withApiUsage(current, next, events, now), transitions };
};
