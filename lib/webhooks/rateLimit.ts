/** Each client's webhook gets at most its rate of calls a second: the next call's slot, per client. */

export interface RateLimiter {
  /** Reserves the client's next slot at `rate` calls a second: when the call may start (epoch ms, now or later). */
  slotFor(client: string, rate: number): number;
}

/**
 * A limiter spreading each client's calls evenly at its rate; clients never wait for each other.
 *
 * @example
 * const limiter = createRateLimiter();
 * const startAt = limiter.slotFor('example-dealer', 10); // now, then now + 100 ms, …
 */
export const createRateLimiter = (now: () => number = Date.now): RateLimiter => {
  const nextSlot = new Map<string, number>();
  return {
    slotFor(client, rate) {
      const start = Math.max(now(), nextSlot.get(client) ?? 0);
      nextSlot.set(client, start + 1000 / Math.max(rate, 0.001));
      return start;
    },
  };
};
