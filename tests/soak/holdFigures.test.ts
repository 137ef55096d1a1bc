/**
 * The soak's hold verdicts (soak/holdFigures.ts): the first registration SAP stores after it came back must come
 * within one probe period and one reconciler period, and no `outage` hold may open on a downstream that was up and
 * answering. Negative controls: a report with a late first delivery planted, one with nothing delivered after the
 * outage although sales waited, one with a CRM hold planted (the shape of a Collections answer in part), one with an
 * ERP hold planted after SAP came back, and each fails the verdict.
 */
import { describe, expect, it } from 'vitest';
import { type HoldInput, holdFigures } from '../../soak/holdFigures.ts';
import type { HoldOpening } from '../../soak/holdWatch.ts';

/** SAP down from t=100 s to t=190 s (epoch ms), probes every 2 s, the reconciler every 2 s: goal 4 s. */
const FROM = 100_000;
const TO = 190_000;
const iso = (ms: number) => new Date(ms).toISOString();
const opening = (downstream: 'erp' | 'crm', at: number, reason = 'outage'): HoldOpening => ({
  downstream,
  reason,
  heldSince: iso(at),
  seenIn: 'log',
});

/** A healthy run: SAP held 1 s into the outage, the probe 1.5 s after it came back stored the first registration. */
const healthy = (): HoldInput => ({
  outage: { from: FROM, to: TO },
  createdAt: [50_000, 99_000, TO + 1_600, TO + 2_500],
  sapCalls: [
    { at: 99_000, status: 201 },
    { at: 150_000, status: 503 },
    { at: TO + 1_500, status: 202 },
  ],
  waiting: 40,
  probeSeconds: 2,
  reconcileSeconds: 2,
  openings: [opening('erp', FROM + 1_000), opening('crm', 20_000, 'api-usage')],
});

describe('the soak hold figures', () => {
  it('keeps both rules: first delivery within the goal, the only outage hold opened while SAP was down', () => {
    // Act
    const figures = holdFigures(healthy());
    // Assess
    expect(figures).toMatchObject({
      firstDeliverySeconds: 1.6,
      firstDeliveryGoalSeconds: 4,
      firstCallSeconds: 1.5,
      firstCallStatus: 202,
      openings: { 'erp outage': 1, 'crm api-usage': 1 },
      openedWhileAnswering: 0,
      recoveredInTime: true,
      kept: true,
    });
  });

  it('negative control: a first delivery later than the goal fails', () => {
    // Prepare: the first registration after the outage 6.2 s after it (goal 4 s).
    const input = { ...healthy(), createdAt: [50_000, TO + 6_200] };
    // Act
    const figures = holdFigures(input);
    // Assess
    expect(figures).toMatchObject({ firstDeliverySeconds: 6.2, recoveredInTime: false, kept: false });
  });

  it('negative control: nothing delivered after the outage while sales waited fails', () => {
    // Prepare
    const input = { ...healthy(), createdAt: [50_000] };
    // Act
    const figures = holdFigures(input);
    // Assess
    expect(figures).toMatchObject({ firstDeliverySeconds: null, recoveredInTime: false, kept: false });
    // With nothing waiting, nothing was due.
    expect(holdFigures({ ...input, waiting: 0 }).kept).toBe(true);
  });

  it('negative control: a CRM outage hold (Salesforce never down) fails', () => {
    // Prepare: the shape of a Collections answer in part (some upserted, some UNABLE_TO_LOCK_ROW) taken for failures.
    const input = healthy();
    input.openings = [...input.openings, opening('crm', 120_000)];
    // Act
    const figures = holdFigures(input);
    // Assess
    expect(figures).toMatchObject({ openedWhileAnswering: 1, kept: false, recoveredInTime: true });
    expect(figures.openedWhileAnsweringAt).toEqual([`crm at ${iso(120_000)} (log)`]);
  });

  it('negative control: an ERP outage hold before the outage or after its grace fails; within the grace not', () => {
    // Prepare
    const before = { ...healthy(), openings: [opening('erp', FROM - 500)] };
    const afterGrace = { ...healthy(), openings: [opening('erp', TO + 5_001)] };
    const inGrace = { ...healthy(), openings: [opening('erp', TO + 4_000)] };
    // Act / Assess
    expect(holdFigures(before)).toMatchObject({ openedWhileAnswering: 1, kept: false });
    expect(holdFigures(afterGrace)).toMatchObject({ openedWhileAnswering: 1, kept: false });
    expect(holdFigures(inGrace)).toMatchObject({ openedWhileAnswering: 0, kept: true });
  });

  it('without an outage judges only the holds', () => {
    // Prepare
    const input = { ...healthy(), outage: { from: 0, to: 0 }, openings: [] };
    // Act
    const figures = holdFigures(input);
    // Assess
    expect(figures).toMatchObject({ firstDeliverySeconds: null, firstCallSeconds: null, kept: true });
    // An ERP hold with no outage at all opened while SAP answered.
    expect(holdFigures({ ...input, openings: [opening('erp', 5_000)] }).kept).toBe(false);
  });
});
