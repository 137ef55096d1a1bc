/**
 * The worker's outcome metrics of a large batch: every value goes out with its dimensions. Powertools flushes a
 * metric by itself at its 100th value and forgets the dimensions as it does; a batch of 200 deliveries must not
 * write half its latencies without `downstream` (no dashboard or alarm would see them), nor warn of an empty flush.
 */
import { describe, expect, it, vi } from 'vitest';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { outputDuring } from '../../testkit/emittedOutput.ts';

vi.hoisted(() => {
  // The test run turns metrics off (vitest.config.ts); this file reads what the tally publishes.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

/** The values of `name` in the metrics documents written, with the dimensions each document carried. */
const valuesOf = (documents: Record<string, unknown>[], name: string) =>
  documents.flatMap((document) => {
    const value = document[name];
    if (value === undefined) return [];
    const values = Array.isArray(value) ? (value as number[]) : [value as number];
    return values.map((one) => ({ value: one, downstream: document.downstream, mode: document.mode }));
  });

const tallyOf = (outcomes: number, mode: 'live' | 'test' = 'live') => {
  const tally = new OutcomeTally();
  for (let index = 0; index < outcomes; index++) tally.add('delivered', 'erp', 1000 + index, mode);
  return tally;
};

describe('the outcome metrics of one worker invocation', () => {
  it.each([1, 99, 100, 200, 250])(
    '%i deliveries: every latency with its downstream, no empty flush',
    async (n) => {
      // Prepare
      const tally = tallyOf(n);
      // Act
      const { metrics, text } = await outputDuring(async () => tally.publish());
      // Assess
      const latencies = valuesOf(metrics, 'deliveryLatency');
      expect(latencies).toHaveLength(n);
      expect(latencies.every(({ downstream }) => downstream === 'erp')).toBe(true);
      expect(valuesOf(metrics, 'delivered')).toEqual([{ value: n, downstream: 'erp', mode: undefined }]);
      expect(text.filter((line) => /No application metrics/.test(line))).toEqual([]);
    },
  );

  it("a test batch's latencies all carry the test mode, past the 100th too", async () => {
    // Prepare
    const tally = tallyOf(150, 'test');
    // Act
    const { metrics } = await outputDuring(async () => tally.publish());
    // Assess
    const latencies = valuesOf(metrics, 'deliveryLatency');
    expect(latencies).toHaveLength(150);
    expect(latencies.every(({ mode }) => mode === 'test')).toBe(true);
  });
});
