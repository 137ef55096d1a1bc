import { cloudWatchClient } from '../../aws/clients.ts';
import { GetMetricDataCommand, type MetricStatQuery } from '../../aws/jsonProtocol/cloudWatch.ts';
import { metricsIdentity } from '../../settings/settings.ts';
import { type ActivityHour, type ActivitySource, emptyHours, lastDayHours } from './hours.ts';

const METRICS = ['accepted', 'delivered', 'failed'] as const;
const DOWNSTREAMS = ['erp', 'crm'] as const;
const MODES = ['live', 'test'] as const;

/**
 * The 12 series of the page: each count (lib/observability/metrics.ts countRecords) per downstream, for live records
 * (dimensions `service`, `downstream`) and test ones (and `mode: test`), summed per hour.
 */
const queries = (): MetricStatQuery[] => {
  const { namespace, service } = metricsIdentity();
  return METRICS.flatMap((metric) =>
    DOWNSTREAMS.flatMap((downstream) =>
      MODES.map((mode) => ({
        Id: `${metric}_${downstream}_${mode}`,
        MetricStat: {
          Metric: {
            Namespace: namespace,
            MetricName: metric,
            Dimensions: [
              { Name: 'service', Value: service },
              { Name: 'downstream', Value: downstream },
              ...(mode === 'test' ? [{ Name: 'mode', Value: 'test' }] : []),
            ],
          },
          Period: 3_600,
          Stat: 'Sum',
        },
      })),
    ),
  );
};

/**
 * The hours from the service's CloudWatch metrics: one GetMetricData (12 series of 24 hourly sums; pages followed),
 * through the service's JSON-protocol client (lib/aws/jsonProtocol/cloudWatch.ts).
 */
export const cloudWatchActivity: ActivitySource = {
  async hours(now) {
    const hours = emptyHours(now);
    const starts = lastDayHours(now);
    const first = starts[0];
    let nextToken: string | undefined;
    do {
      const out = await cloudWatchClient().send(
        new GetMetricDataCommand({
          MetricDataQueries: queries(),
          StartTime: first / 1000,
          EndTime: (starts[23] + 3_600_000) / 1000,
          ScanBy: 'TimestampAscending',
          NextToken: nextToken,
        }),
      );
      for (const result of out.MetricDataResults ?? []) {
        const [metric, downstream] = (result.Id ?? '').split('_') as [
          (typeof METRICS)[number],
          'erp' | 'crm',
        ];
        if (!METRICS.includes(metric) || !DOWNSTREAMS.includes(downstream)) continue;
        (result.Timestamps ?? []).forEach((seconds, i) => {
          const index = Math.floor((seconds * 1000 - first) / 3_600_000);
          const hour: ActivityHour | undefined =
            index >= 0 && index < 24 ? hours[(downstream === 'erp' ? 0 : 24) + index] : undefined;
          if (hour) hour[metric] += result.Values?.[i] ?? 0;
        });
      }
      nextToken = out.NextToken;
    } while (nextToken);
    return hours;
  },
};
