import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Downstream } from '../types.ts';

/** Powertools Metrics (CloudWatch embedded metric format); dimension `downstream` is `erp` or `crm`. */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'DealerGateway',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'dealer-gateway',
});

export type MetricName = 'accepted' | 'delivered' | 'rejected' | 'failed' | 'retried';

/**
 * Publishes a count for one downstream at once (a single-metric line), so that records of one invocation can
 * carry different outcomes without sharing a flush.
 *
 * @example
 * countRecords('delivered', 'crm', 1);
 */
export const countRecords = (
  name: MetricName,
  downstream: Downstream,
  count: number,
  mode: 'live' | 'test' = 'live',
): void => {
  const single = metrics.singleMetric();
  single.addDimension('downstream', downstream);
  // Test records' metrics are metrics of their own (a `mode` dimension): the alarms, on live ones, never see them.
  if (mode === 'test') single.addDimension('mode', 'test');
  single.addMetric(name, MetricUnit.Count, count);
};

/**
 * Publishes whether a downstream is held (`downstreamHeld`: 1 held, 0 not), at once in its own line: by the worker
 * when it opens or closes a hold (lib/outage), and by the reconciler every minute as it stands, so the alarm on it
 * follows the hold even when an opening and a closing fall in one minute.
 *
 * @example
 * reportDownstreamHeld('erp', true);
 */
export const reportDownstreamHeld = (downstream: Downstream, held: boolean): void => {
  const single = metrics.singleMetric();
  single.addDimension('downstream', downstream);
  single.addMetric('downstreamHeld', MetricUnit.Count, held ? 1 : 0);
};

/**
 * The outcomes of one worker invocation, published together in one metrics line at its end (one `Metrics`
 * flush per invocation instead of a single-metric line per record).
 *
 * @example
 * const tally = new OutcomeTally();
 * tally.add('delivered', 'erp', 1250);
 * tally.publish();
 */
/** Fewer than the 100 values at which Powertools flushes a metric by itself (see OutcomeTally's publish). */
const LATENCIES_PER_DOCUMENT = 99;

export class OutcomeTally {
  #counts = new Map<string, number>();
  #latencies = new Map<string, number[]>();

  add(name: MetricName, downstream: Downstream, latencyMs?: number, mode: 'live' | 'test' = 'live'): void {
    const line = `${mode}|${downstream}`;
    const key = `${line}|${name}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (latencyMs !== undefined) this.#latencies.set(line, [...(this.#latencies.get(line) ?? []), latencyMs]);
  }

  /**
   * Writes the counts and latencies, one metrics line per downstream and mode: test records' with a `mode`
   * dimension of their own, so no alarm (on live metrics) ever moves for them. Powertools flushes a metric by itself
   * at its 100th value and forgets the dimensions as it does, so the values after it would go out with none (and an
   * empty flush at the end warns): a line with many latencies is written as several documents of fewer values, each
   * with its dimensions.
   */
  publish(): void {
    for (const line of ['live|erp', 'live|crm', 'test|erp', 'test|crm']) {
      const [mode, downstream] = line.split('|');
      const counts = [...this.#counts].filter(([key]) => key.startsWith(`${line}|`));
      const latencies = this.#latencies.get(line) ?? [];
      if (counts.length === 0) continue;
      for (let first = 0; first === 0 || first < latencies.length; first += LATENCIES_PER_DOCUMENT) {
        metrics.addDimension('downstream', downstream);
        if (mode === 'test') metrics.addDimension('mode', 'test');
        if (first === 0)
          for (const [key, count] of counts) metrics.addMetric(key.split('|')[2], MetricUnit.Count, count);
        for (const latency of latencies.slice(first, first + LATENCIES_PER_DOCUMENT))
          metrics.addMetric('deliveryLatency', MetricUnit.Milliseconds, latency);
        metrics.publishStoredMetrics();
      }
    }
  }
}
