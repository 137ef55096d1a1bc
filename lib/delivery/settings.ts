import { positiveInteger } from '../settings.ts';

/** Delivery settings (CONTRACT section 3), read from the environment. */
export interface DeliverySettings {
  /**
   * All tries, the first included, counted on the record (`tries`). The queue's maxReceiveCount is set far higher
   * (serverless.yml custom.delivery.maxReceiveCount): receives also count copies bounced by a lease.
   */
  maxAttempts: number;
  /** The wait after attempt n is at least this times 2^(n-1), plus at most 20 % jitter. */
  retryBaseSeconds: number;
  /**
   * How long a worker's claim on a record holds: longer than an invocation can run (the worker's function
   * timeout), so that no second copy of a message reaches the downstream while the first is still being delivered.
   */
  leaseSeconds: number;
}

/**
 * Reads `DELIVERY_MAX_ATTEMPTS` (default 5), `DELIVERY_RETRY_BASE_SECONDS` (default 30) and
 * `DELIVERY_LEASE_SECONDS` (default 90: the worker's 60 s timeout and a margin).
 */
export const deliverySettings = (env = process.env): DeliverySettings => ({
  maxAttempts: positiveInteger('DELIVERY_MAX_ATTEMPTS', env.DELIVERY_MAX_ATTEMPTS, 5),
  retryBaseSeconds: positiveInteger('DELIVERY_RETRY_BASE_SECONDS', env.DELIVERY_RETRY_BASE_SECONDS, 30),
  leaseSeconds: positiveInteger('DELIVERY_LEASE_SECONDS', env.DELIVERY_LEASE_SECONDS, 90),
});

/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * Seconds to wait before the next attempt after attempt `attempt` (1-based): base * 2^(attempt-1), plus at
 * most 20 % jitter so that records failing together do not retry together.
 *
 * @example
 * retryDelaySeconds(3, 30) // 120 to 144
 */
export const retryDelaySeconds = (attempt: number, baseSeconds: number, random = Math.random): number => {
  const wait = baseSeconds * 2 ** (attempt - 1);
  return Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(wait * (1 + 0.2 * random())));
};
