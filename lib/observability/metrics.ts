import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

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
export const countRecords = (name: MetricName, downstream: 'erp' | 'crm', count: number): void => {
  const single = metrics.singleMetric();
  single.addDimension('downstream', downstream);
  single.addMetric(name, MetricUnit.Count, count);
};

/** Time from acceptance to delivery, per downstream. */
export const recordDeliveryLatency = (downstream: 'erp' | 'crm', milliseconds: number): void => {
  const single = metrics.singleMetric();
  single.addDimension('downstream', downstream);
  single.addMetric('deliveryLatency', MetricUnit.Milliseconds, milliseconds);
};
