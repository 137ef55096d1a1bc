/**
 * What the reconciler publishes (CloudWatch embedded metric format on stdout): `requeued` per downstream and
 * `oldestRequeuedWait`, on which StuckRecordsAlarm is set; and its one setting.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishReconcileMetrics } from '../../lib/reconcile/reconcile.ts';
import { requeueDelaySeconds } from '../../lib/reconcile/requeueDelay.ts';
import { dueAfter } from '../../lib/records/due.ts';
import { reconcileSettings } from '../../lib/settings/settings.ts';

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

/** Metric name → [unit, value, dimensions] of each document. */
const readings = (documents: Record<string, unknown>[]) =>
  documents.flatMap((document) => {
    const { CloudWatchMetrics } = document._aws as {
      CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
    };
    return CloudWatchMetrics.flatMap(({ Dimensions, Metrics }) =>
      Metrics.map(({ Name, Unit }) => ({
        name: Name,
        unit: Unit,
        value: document[Name],
        dimensions: Object.fromEntries(Dimensions.flat().map((key) => [key, document[key]])),
      })),
    );
  });

describe('the reconciler metrics', () => {
  let disabled: string | undefined;
  beforeEach(() => {
    // The test run turns metrics off (vitest.config.ts); these tests read them.
    disabled = process.env.POWERTOOLS_METRICS_DISABLED;
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  });
  afterEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = disabled;
  });

  it('publishes requeued per downstream, the oldest wait and whether each downstream is held, each in its own line', () => {
    // Act
    const documents = publishedDuring(() =>
      publishReconcileMetrics({
        requeued: { salesRegistration: 3, caseRecord: 2 },
        unqueued: 1,
        deferred: [],
        oldestWaitSeconds: 1800,
        holds: { erp: { held: true, heldSince: '2026-11-27T03:00:00.000Z' }, crm: { held: false } },
        probes: { salesRegistration: 1, caseRecord: 0 },
      }),
    );
    // Assess
    expect(documents).toHaveLength(5);
    expect(readings(documents)).toEqual([
      {
        name: 'requeued',
        unit: 'Count',
        value: 3,
        dimensions: expect.objectContaining({ downstream: 'erp' }),
      },
      {
        name: 'requeued',
        unit: 'Count',
        value: 2,
        dimensions: expect.objectContaining({ downstream: 'crm' }),
      },
      { name: 'oldestRequeuedWait', unit: 'Seconds', value: 1800, dimensions: expect.any(Object) },
      {
        name: 'downstreamHeld',
        unit: 'Count',
        value: 1,
        dimensions: expect.objectContaining({ downstream: 'erp' }),
      },
      {
        name: 'downstreamHeld',
        unit: 'Count',
        value: 0,
        dimensions: expect.objectContaining({ downstream: 'crm' }),
      },
    ]);
    expect(readings(documents)[2].dimensions).not.toHaveProperty('downstream');
  });

  it('publishes zeros on a quiet run, so the alarm sees data rather than none', () => {
    const documents = publishedDuring(() =>
      publishReconcileMetrics({
        requeued: { salesRegistration: 0, caseRecord: 0 },
        unqueued: 0,
        deferred: [],
        oldestWaitSeconds: 0,
        holds: { erp: { held: false }, crm: { held: false } },
        probes: { salesRegistration: 0, caseRecord: 0 },
      }),
    );
    expect(readings(documents).map(({ name, value }) => [name, value])).toEqual([
      ['requeued', 0],
      ['requeued', 0],
      ['oldestRequeuedWait', 0],
      ['downstreamHeld', 0],
      ['downstreamHeld', 0],
    ]);
  });
});

describe('the reconciler settings', () => {
  it('reads RECONCILE_AFTER_SECONDS (300), RECONCILE_MAX_INTERVAL_SECONDS (3600), RECONCILE_MAX_PER_RUN (500), RECONCILE_MAX_AFTER_HOLD (5000)', () => {
    expect(reconcileSettings({})).toEqual({
      reconcileAfterSeconds: 300,
      maxIntervalSeconds: 3600,
      maxPerRun: 500,
      maxAfterHold: 5000,
    });
    expect(
      reconcileSettings({
        RECONCILE_AFTER_SECONDS: '60',
        RECONCILE_MAX_INTERVAL_SECONDS: '600',
        RECONCILE_MAX_PER_RUN: '7',
        RECONCILE_MAX_AFTER_HOLD: '70',
      }),
    ).toEqual({ reconcileAfterSeconds: 60, maxIntervalSeconds: 600, maxPerRun: 7, maxAfterHold: 70 });
  });

  it('spaces re-queues of one record: the delay doubled per earlier re-queue, capped', () => {
    const settings = { reconcileAfterSeconds: 300, maxIntervalSeconds: 3600 };
    expect([0, 1, 2, 3, 4, 5, 60].map((n) => requeueDelaySeconds(n, settings))).toEqual([
      300, 600, 1200, 2400, 3600, 3600, 3600,
    ]);
    // A cap below the delay never makes a re-queue come sooner than the delay.
    expect(requeueDelaySeconds(3, { reconcileAfterSeconds: 300, maxIntervalSeconds: 60 })).toBe(300);
  });

  it('refuses a value that is no whole number of at least 1, naming the setting', () => {
    expect(() => reconcileSettings({ RECONCILE_AFTER_SECONDS: '0' })).toThrow(
      'setting RECONCILE_AFTER_SECONDS must be a whole number of at least 1',
    );
  });

  it('gives due times as the ISO text the open index sorts by', () => {
    expect(dueAfter(new Date('2026-11-22T10:00:00Z'), 300)).toBe('2026-11-22T10:05:00.000Z');
  });
});
