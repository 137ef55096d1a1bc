/**
 * The "Activity" page's AWS source (lib/console/activity/cloudWatchActivity.ts) against a scripted CloudWatch
 * endpoint (a real HTTP server: CloudWatch itself cannot run here): the request it signs and sends (the JSON 1.0
 * protocol's target, the 12 series with the dimensions lib/observability/metrics.ts publishes, a day of hours), and
 * the answer's hourly sums put in their hours, live and test added, pages followed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cloudWatchActivity } from '../../lib/console/activity/cloudWatchActivity.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { awsOk, startScriptedAws } from '../../testkit/scriptedAws.ts';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

const NOW = new Date('2026-12-07T21:30:00.000Z');
const hourSeconds = (iso: string) => Date.parse(iso) / 1000;

describe('the activity from CloudWatch', () => {
  it('asks GetMetricData for each count per downstream, live and test, hourly over the last day, and sums them per hour', async () => {
    // Prepare: two pages of answers.
    const aws = await startScriptedAws([
      awsOk({
        MetricDataResults: [
          {
            Id: 'accepted_erp_live',
            Timestamps: [hourSeconds('2026-12-07T21:00:00Z'), hourSeconds('2026-12-06T22:00:00Z')],
            Values: [5, 2],
            StatusCode: 'Complete',
          },
          {
            Id: 'accepted_erp_test',
            Timestamps: [hourSeconds('2026-12-07T21:00:00Z')],
            Values: [1],
          },
        ],
        NextToken: 'page-2',
      }),
      awsOk({
        MetricDataResults: [
          { Id: 'failed_crm_live', Timestamps: [hourSeconds('2026-12-07T03:00:00Z')], Values: [3] },
          // Older than the day asked: not shown.
          { Id: 'delivered_crm_live', Timestamps: [hourSeconds('2026-12-06T21:00:00Z')], Values: [9] },
        ],
      }),
    ]);
    stop = aws.stop;
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_CLOUDWATCH: aws.endpoint,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      POWERTOOLS_METRICS_NAMESPACE: 'DealerGateway',
      POWERTOOLS_SERVICE_NAME: 'dealer-gateway',
    });
    resetSettings();
    // Act
    const hours = await cloudWatchActivity.hours(NOW);
    // Assess: the requests
    expect(aws.requests).toHaveLength(2);
    expect(aws.requests[0].headers['x-amz-target']).toBe('GraniteServiceVersion20100801.GetMetricData');
    expect(aws.requests[0].headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 .*\/eu-west-1\/monitoring\/aws4_request/,
    );
    const first = JSON.parse(aws.requests[0].body);
    expect(first.StartTime).toBe(hourSeconds('2026-12-06T22:00:00Z'));
    expect(first.EndTime).toBe(hourSeconds('2026-12-07T22:00:00Z'));
    expect(first.MetricDataQueries).toHaveLength(12);
    expect(first.MetricDataQueries).toContainEqual({
      Id: 'failed_crm_test',
      MetricStat: {
        Metric: {
          Namespace: 'DealerGateway',
          MetricName: 'failed',
          Dimensions: [
            { Name: 'service', Value: 'dealer-gateway' },
            { Name: 'downstream', Value: 'crm' },
            { Name: 'mode', Value: 'test' },
          ],
        },
        Period: 3600,
        Stat: 'Sum',
      },
    });
    expect(JSON.parse(aws.requests[1].body).NextToken).toBe('page-2');
    // Assess: the hours
    expect(hours).toHaveLength(48);
    expect(hours[0]).toEqual({
      hour: '2026-12-06T22:00:00.000Z',
      downstream: 'erp',
      accepted: 2,
      delivered: 0,
      failed: 0,
    });
    expect(hours[23]).toEqual({
      hour: '2026-12-07T21:00:00.000Z',
      downstream: 'erp',
      accepted: 6,
      delivered: 0,
      failed: 0,
    });
    expect(hours.find((h) => h.downstream === 'crm' && h.hour === '2026-12-07T03:00:00.000Z')?.failed).toBe(
      3,
    );
    expect(hours.reduce((sum, h) => sum + h.delivered, 0)).toBe(0);
  });
});
