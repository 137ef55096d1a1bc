/**
 * The soak's outage verdict (soak/outageFigures.ts): the requests that reached SAP while it was down are
 * held against the probes allowed, and a record answered 200 during the outage that ended `failed` breaks the
 * rule. Negative controls: one call more than allowed, or one such failed record, and the run fails.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../soak/ledger.ts';
import { outageFigures } from '../../soak/outageFigures.ts';

/** A 60 s outage from t=1,000 ms, probes every 5 s, threshold 5, two calls in flight: 12 + 1 + 5 + 2 = 20 allowed. */
const base = (calls: number, outcomes: [string, Outcome][]) => ({
  from: 1_000,
  to: 61_000,
  calls,
  deliveryCalls: calls,
  seconds: 60,
  probeSeconds: 5,
  afterFailures: 5,
  inFlight: 2,
  answeredAt: new Map([
    ['before', 500],
    ['during', 30_000],
    ['after', 70_000],
  ]),
  outcomes: new Map(outcomes),
});

describe('the soak outage figures', () => {
  it('keeps the rule with calls within the probes allowed and nothing sent during the outage failed', () => {
    // Act
    const figures = outageFigures(
      base(20, [
        ['before', 'failed'],
        ['during', 'delivered'],
        ['after', 'failed'],
      ]),
    );
    // Assess
    expect(figures).toMatchObject({ probesAllowed: 20, acceptedDuring: 1, failedDuring: 0, kept: true });
  });

  it('negative control: one call more than allowed breaks it', () => {
    // Act
    const figures = outageFigures(base(21, [['during', 'delivered']]));
    // Assess
    expect(figures.kept).toBe(false);
  });

  it('negative control: a record answered during the outage that ended failed breaks it', () => {
    // Act
    const figures = outageFigures(base(3, [['during', 'failed']]));
    // Assess
    expect(figures).toMatchObject({ failedDuring: 1, kept: false });
  });

  it('has nothing to judge without an outage', () => {
    // Act
    const figures = outageFigures({ ...base(0, []), seconds: 0, from: 0 });
    // Assess
    expect(figures).toMatchObject({ probesAllowed: 0, kept: true });
  });
});
