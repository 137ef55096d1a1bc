/**
 * When a webhook is tried again: Stripe's span (3 days) with exponential backoff and full jitter. Retry k falls at
 * a uniformly random time inside its own window; windows double from `baseMs` up to `capMs` and follow each other
 * from the first attempt on, so a webhook coming back is not hit by every retry at once, and the attempts keep
 * their span whatever the random draws: the last retry's window starts `spanMs` or later after the first attempt.
 * Deliveries to SAP and Salesforce retry by another policy on purpose (lib/delivery/retryDelay.ts; the two side by
 * side: docs/design.md, "Two retry policies, side by side").
 */

export interface RetrySchedule {
  /** The first retry's window (ms): within this long after the first attempt. */
  baseMs: number;
  /** The longest window (ms). On AWS at most 6 h, so that two windows stay within SQS's 12 h visibility limit. */
  capMs: number;
  /** Retries go on until a window starts this long (ms) after the first attempt: at least 3 days. */
  spanMs: number;
}

/** The schedule on AWS (and locally by default): windows of 1 min, 2 min, … up to 6 h, for 3 days. */
export const WEBHOOK_RETRY_SCHEDULE: RetrySchedule = {
  baseMs: 60_000,
  capMs: 6 * 3_600_000,
  spanMs: 3 * 86_400_000,
};

/** Retry k's window (k from 1): its start after the first attempt, and its length. */
export const retryWindow = (k: number, schedule: RetrySchedule): { startMs: number; lengthMs: number } => {
  let startMs = 0;
  let lengthMs = schedule.baseMs;
  let j = 1;
  // Doubling part (a few dozen steps at most), then windows of capMs each.
  while (j < k && lengthMs < schedule.capMs) {
    startMs += lengthMs;
    lengthMs = Math.min(schedule.capMs, lengthMs * 2);
    j++;
  }
  lengthMs = Math.min(schedule.capMs, lengthMs);
  return { startMs: startMs + (k - j) * lengthMs, lengthMs };
};

/**
 * How many attempts a webhook gets at most: the first, and one per window up to the first window that starts
 * `spanMs` or later after it.
 *
 * @example
 * webhookAttempts(WEBHOOK_RETRY_SCHEDULE) // 22
 */
export const webhookAttempts = (schedule: RetrySchedule = WEBHOOK_RETRY_SCHEDULE): number => {
  let k = 1;
  // The doubling part by steps, the rest at once.
  while (
    retryWindow(k, schedule).lengthMs < schedule.capMs &&
    retryWindow(k, schedule).startMs < schedule.spanMs
  )
    k++;
  const { startMs, lengthMs } = retryWindow(k, schedule);
  if (startMs < schedule.spanMs) k += Math.ceil((schedule.spanMs - startMs) / lengthMs);
  return k + 1;
};

/**
 * When the next attempt is due after `attemptsMade` failed ones (epoch ms), or undefined when none is left.
 *
 * @param firstAttemptAt when the first attempt was made (epoch ms)
 * @example
 * nextAttemptAt(firstAt, 1) // a random time in [firstAt, firstAt + 60 000)
 */
export const nextAttemptAt = (
  firstAttemptAt: number,
  attemptsMade: number,
  schedule: RetrySchedule = WEBHOOK_RETRY_SCHEDULE,
  random: () => number = Math.random,
): number | undefined => {
  if (attemptsMade < 1 || attemptsMade >= webhookAttempts(schedule)) return undefined;
  const { startMs, lengthMs } = retryWindow(attemptsMade, schedule);
  return firstAttemptAt + startMs + Math.floor(random() * lengthMs);
};
