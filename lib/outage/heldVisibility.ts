/**
 * SQS refuses a visibility timeout beyond 12 hours after the receive; a margin for the time the worker took.
 * (SQS keeps a message at most 14 days: a record whose message expires is queued again by the reconciler.)
 */
export const MAX_HELD_VISIBILITY_SECONDS = 12 * 60 * 60 - 60;

/**
 * How long a message of a held downstream stays hidden when the worker hands it back: at least until the next
 * probe may start, and half as long again as the hold has lasted, so a message is received about log1.5(hold /
 * probe period) times instead of once per period (14 days with a 30 s period: 46 receives, far below a
 * maxReceiveCount of 100, where a fixed 30 s would be 40,000). The backlog does not wait for these copies when the
 * hold ends: the reconciler queues the held records again, and a copy that comes back later finds its record
 * settled and is dropped.
 *
 * @example
 * heldVisibilitySeconds({ heldSince: '2026-11-27T03:00:00Z', until: '2026-11-27T04:00:30Z' }, new Date('2026-11-27T04:00:00Z'), 30)
 * // 1800: the hold has lasted an hour
 */
export const heldVisibilitySeconds = (
  hold: { heldSince: string; until: string },
  now: Date,
  probeSeconds: number,
): number => {
  const untilProbe = Math.ceil((Date.parse(hold.until) - now.getTime()) / 1000);
  const heldFor = Math.max(0, (now.getTime() - Date.parse(hold.heldSince)) / 1000);
  const seconds = Math.max(probeSeconds, untilProbe, Math.ceil(heldFor / 2));
  return Math.min(MAX_HELD_VISIBILITY_SECONDS, Number.isFinite(seconds) ? seconds : probeSeconds);
};
