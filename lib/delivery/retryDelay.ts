/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * Seconds to wait before the next attempt after attempt `attempt` (1-based): base * 2^(attempt-1), plus at
 * most 20 % jitter so that records failing together do not retry together. Webhooks retry by another policy on
 * purpose (lib/webhooks/retrySchedule.ts; the two side by side: docs/design.md, "Two retry policies, side by side").
 *
 * @example
 * retryDelaySeconds(3, 30) // 120 to 144
 */
export const retryDelaySeconds = (attempt: number, baseSeconds: number, random = Math.random): number => {
  const wait = baseSeconds * 2 ** (attempt - 1);
  return Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(wait * (1 + 0.2 * random())));
};
