import type { OutageSettings } from '../settings/settings.ts';
import type { ApiUsage, Downstream, HoldRecord, HoldTransition, NotedOutcome } from './types.ts';

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
  const changed = (fields: Partial<HoldRecord>): HoldRecord => ({
    ...current,
    ...fields,
    version: current.version + 1,
    updatedAt: at,
  });
  const open = (reason: HoldRecord['reason'] & string): HoldStep => ({
    next: changed({
      ...noStreak,
      held: true,
      reason,
      heldSince: at,
      closedAt: undefined,
      probeAt: later(now, settings.probeSeconds),
    }),
    transition: { downstream: current.downstream, change: 'opened', reason, heldSince: at },
  });

  if (current.held) {
    if (high) {
      return current.reason === 'api-usage' ? { next: current } : { next: changed({ reason: 'api-usage' }) };
    }
    const mayClose =
      current.reason === 'api-usage' ? high === false && (answered || event.kind === 'usage') : answered;
    if (!mayClose) return { next: current };
    const heldSince = current.heldSince ?? at;
    return {
      next: changed({ ...noStreak, held: false, reason: undefined, probeAt: undefined, closedAt: at }),
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
 * {@link holdAfter} for several events in the order given (the parts of one batched call): one write for all.
 *
 * @example
 * const { next, transitions } = holdAfterAll(current, parts, new Date(), settings);
 */
export const holdAfterAll = (
  current: HoldRecord,
  events: readonly HoldEvent[],
  now: Date,
  settings: Pick<OutageSettings, 'afterFailures' | 'probeSeconds' | 'apiUsageShare'>,
): { next: HoldRecord; transitions: HoldTransition[] } => {
  let next = current;
  const transitions: HoldTransition[] = [];
  for (const event of events) {
    const step = holdAfter(next, event, now, settings);
    next = step.next;
    if (step.transition) transitions.push(step.transition);
  }
  return { next, transitions };
};
