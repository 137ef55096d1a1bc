/**
 * What the hold publishes for operations (CloudWatch embedded metric format on stdout): `downstreamHeld` per
 * downstream, 1 when held and 0 when not, on which each downstream's held alarm is set; and the hold's settings.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportDownstreamHeld } from '../../lib/observability/metrics.ts';
import { outageSettings } from '../../lib/settings/settings.ts';

/** The EMF documents written to stdout while `act` runs: one per metrics line. */
const publishedDuring = (act: () => void): Record<string, unknown>[] => {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  try {
    act();
  } finally {
    process.stdout.write = write;
  }
  return lines
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line));
};

describe('the downstreamHeld metric', () => {
  let disabled: string | undefined;
  beforeEach(() => {
    // The test run turns metrics off (vitest.config.ts); these tests read them.
    disabled = process.env.POWERTOOLS_METRICS_DISABLED;
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  });
  afterEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = disabled;
  });

  it('publishes 1 when a downstream is held and 0 when not, each in its own line with service and downstream', () => {
    // Act
    const documents = publishedDuring(() => {
      reportDownstreamHeld('erp', true);
      reportDownstreamHeld('crm', false);
    });
    // Assess
    expect(documents.map((d) => [d.downstream, d.service, d.downstreamHeld])).toEqual([
      ['erp', 'dealer-gateway', 1],
      ['crm', 'dealer-gateway', 0],
    ]);
    for (const document of documents) {
      const [directive] = (document._aws as { CloudWatchMetrics: Record<string, unknown>[] })
        .CloudWatchMetrics;
      expect(directive).toMatchObject({
        Namespace: 'DealerGateway',
        Dimensions: [expect.arrayContaining(['service', 'downstream'])],
        Metrics: [{ Name: 'downstreamHeld', Unit: 'Count' }],
      });
    }
  });
});

describe('the hold settings', () => {
  it('defaults to 5 failures, a probe every 30 s, half of 20 calls, 80 % of the allowance and a 5 s cache', () => {
    expect(outageSettings({})).toEqual({
      afterFailures: 5,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 5,
    });
  });

  it('reads each setting, a cache of 0 included', () => {
    const env = {
      OUTAGE_AFTER_FAILURES: '3',
      OUTAGE_PROBE_SECONDS: '2',
      OUTAGE_FAILURE_RATE: '0.4',
      OUTAGE_RATE_WINDOW: '50',
      CRM_API_USAGE_SHARE: '0.95',
      OUTAGE_STATE_CACHE_SECONDS: '0',
    };
    expect(outageSettings(env)).toEqual({
      afterFailures: 3,
      probeSeconds: 2,
      failureRate: 0.4,
      rateWindow: 50,
      apiUsageShare: 0.95,
      cacheSeconds: 0,
    });
  });

  it.each([
    [{ OUTAGE_AFTER_FAILURES: '0' }, 'setting OUTAGE_AFTER_FAILURES must be a whole number of at least 1'],
    [{ OUTAGE_PROBE_SECONDS: '1.5' }, 'setting OUTAGE_PROBE_SECONDS must be a whole number of at least 1'],
    [{ OUTAGE_FAILURE_RATE: '50' }, 'setting OUTAGE_FAILURE_RATE must be a number above 0 and at most 1'],
    [{ OUTAGE_FAILURE_RATE: 'half' }, 'setting OUTAGE_FAILURE_RATE must be a number above 0 and at most 1'],
    [{ OUTAGE_RATE_WINDOW: '0' }, 'setting OUTAGE_RATE_WINDOW must be a whole number of at least 1'],
    [{ CRM_API_USAGE_SHARE: '80' }, 'setting CRM_API_USAGE_SHARE must be a number above 0 and at most 1'],
    [{ CRM_API_USAGE_SHARE: '0' }, 'setting CRM_API_USAGE_SHARE must be a number above 0 and at most 1'],
    [
      { OUTAGE_STATE_CACHE_SECONDS: '-1' },
      'setting OUTAGE_STATE_CACHE_SECONDS must be a whole number of at least 0',
    ],
  ])('refuses %o naming the setting and its rule', (env, message) => {
    expect(() => outageSettings(env)).toThrow(message);
  });
});
