/**
 * The q-quantile (nearest rank) of the values; NaN for none: the campaign's one percentile, for the clients'
 * delivery times (clientTimes.ts) and the other clients' webhook delays (slowReceiver.ts).
 *
 * @example
 * quantile([3, 1, 2], 0.5) // 2
 */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};
