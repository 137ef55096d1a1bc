/**
 * The q-quantile (nearest rank) of the values; NaN for none: the one percentile of the campaign (the clients'
 * delivery times, the other clients' webhook delays) and the benches (latencies). Nearest rank, not interpolated:
 * a p95 of twenty delays is the 19th, so one late event in twenty is not a broken promise (soak/slowReceiver.ts).
 *
 * @example
 * quantile([3, 1, 2], 0.5) // 2
 */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};
