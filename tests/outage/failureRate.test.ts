/**
 * The failure-rate rule of the downstream hold (lib/outage/rules.ts), without the store: a window of the last
 * OUTAGE_RATE_WINDOW calls (not records) that opens the hold at OUTAGE_FAILURE_RATE though failures never come five in
 * a row, that never reopens on calls made before the hold closed, and the chance that decides whether a record failing
 * alone in its call spends a try.
 */
import { describe, expect, it } from 'vitest';
import { FAULTLESS_CHANCE_BOUND } from '../../lib/outage/constants.ts';
import {
  failureRateOf,
  type HoldEvent,
  holdAfterAll,
  loneFailure,
  openingHold,
} from '../../lib/outage/rules.ts';
import type { HoldRecord, HoldTransition } from '../../lib/outage/types.ts';
import { outageSettings } from '../../lib/settings/settings.ts';

const SETTINGS = outageSettings({});
const T0 = Date.parse('2026-11-27T03:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);

/** One call's events: `F` failed whole (records `a`, `b`: two parts), `A` answered (a delivered part). */
const callOf = (call: 'F' | 'A', index: number): HoldEvent[] =>
  call === 'F'
    ? [
        { recordId: `a${index}`, kind: 'transient' },
        { recordId: `b${index}`, kind: 'transient' },
      ]
    : [{ recordId: `d${index}`, kind: 'delivered' }];

/** Counts the calls in turn, a second apart from `from`; the hold after them and every change they made. */
const calls = (pattern: string, from: HoldRecord = openingHold('erp'), start = 0) => {
  let hold = from;
  const transitions: HoldTransition[] = [];
  [...pattern].forEach((call, index) => {
    const step = holdAfterAll(hold, callOf(call as 'F' | 'A', index), at(start + index), SETTINGS);
    hold = step.next;
    transitions.push(...step.transitions);
  });
  return { hold, transitions };
};

describe('the failure rate of a downstream', () => {
  it('opens the hold when half of the last 20 calls failed whole, though never two in a row, and not one call sooner', () => {
    // Prepare: calls of two records alternately failing and answered: the streak never passes 4 (two per call).
    const nineteen = 'FA'.repeat(10).slice(0, 19);
    // Act
    const before = calls(nineteen);
    const twentieth = calls('A', before.hold, 19);
    const afterOneMore = calls('F', twentieth.hold, 20);
    // Assess: 19 calls are not a window; the 20th answered leaves 10 of 20 failed; it opens then, not before.
    expect(before.transitions).toEqual([]);
    expect(failureRateOf(before.hold, SETTINGS.rateWindow)).toBeUndefined();
    expect(twentieth.transitions).toEqual([
      { downstream: 'erp', change: 'opened', reason: 'outage', heldSince: at(19).toISOString() },
    ]);
    expect(twentieth.hold).toMatchObject({ held: true, failures: 0, recentCalls: '10'.repeat(10) });
    expect(afterOneMore.transitions).toEqual([]);
  });

  it('never opens below the share: 9 failed calls in every 20, for 200 calls', () => {
    // Prepare
    const nine = 'FAFAFAFAFAFAFAFAFAAA';
    // Act
    const { hold, transitions } = calls(nine.repeat(10));
    // Assess
    expect([...nine].filter((call) => call === 'F')).toHaveLength(9);
    expect(transitions).toEqual([]);
    expect(failureRateOf(hold, SETTINGS.rateWindow)).toBe(0.45);
  });

  it('counts a call once whatever it carried: failed whole if no part was answered, answered if any was', () => {
    // Prepare: one call of three records failed whole; one with a part delivered among failed parts.
    const whole: HoldEvent[] = ['x', 'y', 'z'].map((recordId) => ({ recordId, kind: 'transient' }));
    const partly: HoldEvent[] = [{ recordId: 'p', kind: 'delivered' }];
    // Act
    const afterWhole = holdAfterAll(openingHold('crm'), whole, at(0), SETTINGS).next;
    const afterPartly = holdAfterAll(afterWhole, partly, at(1), SETTINGS).next;
    const usageOnly = holdAfterAll(
      afterPartly,
      [{ kind: 'usage', apiUsage: { used: 1, allowed: 10 } }],
      at(2),
      SETTINGS,
    );
    // Assess
    expect(afterWhole).toMatchObject({ recentCalls: '1', callsSinceClose: 1, failures: 3 });
    expect(afterPartly).toMatchObject({ recentCalls: '10', callsSinceClose: 2, failures: 0 });
    // A reading alone is no call: the window is unchanged; the reading is kept for the console (withApiUsage).
    expect(usageOnly.next).toEqual({
      ...afterPartly,
      apiUsage: { used: 1, allowed: 10, at: at(2).toISOString() },
      version: afterPartly.version + 1,
      updatedAt: at(2).toISOString(),
    });
  });

  it('changes nothing for a success while the window is all answers: no write', () => {
    // Prepare
    const { hold } = calls('A'.repeat(SETTINGS.rateWindow));
    const justClosed = { ...hold, callsSinceClose: 0 };
    // Act
    const step = holdAfterAll(hold, callOf('A', 99), at(99), SETTINGS);
    const afterClose = holdAfterAll(justClosed, callOf('A', 99), at(99), SETTINGS);
    // Assess: but a success just after a close is a fresh call, written.
    expect(hold).toMatchObject({ recentCalls: '0'.repeat(20), callsSinceClose: 20 });
    expect(step.next).toBe(hold);
    expect(afterClose.next).toMatchObject({ recentCalls: '0'.repeat(20), callsSinceClose: 1 });
    expect(afterClose.next.version).toBe(hold.version + 1);
  });

  it('keeps the window through a hold, counts no failed probe, and reopens only on calls made since it closed', () => {
    // Prepare: opened on the rate; two failed probes; an answered probe closes it.
    const opened = calls('FA'.repeat(10)).hold;
    const probes: HoldEvent[][] = [
      [{ recordId: 'p1', kind: 'transient', probe: true }],
      [{ recordId: 'p2', kind: 'transient', probe: true }],
      [{ recordId: 'p3', kind: 'delivered', probe: true }],
    ];
    let hold = opened;
    const changes: HoldTransition[] = [];
    for (const [index, events] of probes.entries()) {
      const step = holdAfterAll(hold, events, at(60 + index * 30), SETTINGS);
      hold = step.next;
      changes.push(...step.transitions);
    }
    // Act: one record's own failure right after; then a downstream still failing every other call.
    const ownFailure = calls('F', hold, 200);
    const flapping = calls('AF'.repeat(9), ownFailure.hold, 201);
    // Assess
    expect(changes.map((change) => change.change)).toEqual(['closed']);
    expect(hold).toMatchObject({ held: false, callsSinceClose: 1, recentCalls: `0${'10'.repeat(9)}0` });
    expect(failureRateOf(hold, SETTINGS.rateWindow)).toBe(0.45);
    expect(ownFailure.transitions).toEqual([]);
    expect(failureRateOf(ownFailure.hold, SETTINGS.rateWindow)).toBe(0.5);
    expect(flapping.transitions.map((change) => change.change)).toEqual(['opened']);
    // The 18th call since the closing probe makes 20 since the close: 10 of them failed.
    expect(flapping.hold.heldSince).toBe(at(201 + 17).toISOString());
  });

  it('never opens on the rate with OUTAGE_FAILURE_RATE 1 while one call in the window was answered', () => {
    // Prepare
    const settings = { ...SETTINGS, failureRate: 1, afterFailures: 100 };
    let hold = openingHold('erp');
    // Act
    for (const [index, call] of [...`A${'F'.repeat(19)}`].entries())
      hold = holdAfterAll(hold, callOf(call as 'F' | 'A', index), at(index), settings).next;
    const last = holdAfterAll(hold, callOf('F', 20), at(20), settings);
    // Assess
    expect(hold.held).toBe(false);
    expect(last.transitions.map((change) => change.change)).toEqual(['opened']);
  });
});

describe('failureRateOf', () => {
  it('is the failed share of the last `window` calls, a longer window kept (the setting lowered) included', () => {
    expect(failureRateOf({ recentCalls: '0110' }, 4)).toBe(0.5);
    expect(failureRateOf({ recentCalls: '1110' }, 2)).toBe(0.5);
    expect(failureRateOf({ recentCalls: '011' }, 4)).toBeUndefined();
    expect(failureRateOf({}, 1)).toBeUndefined();
  });
});

describe('a record failing alone in its call', () => {
  it('spends its try while the rate is unknown, leaving its chance as it was', () => {
    expect(loneFailure(0.25, undefined)).toEqual({ givenBack: false, chance: 0.25 });
  });

  it('spends its try on a downstream whose last calls all answered, and from then on', () => {
    // Act
    const first = loneFailure(1, 0);
    const later = loneFailure(first.chance, 0.9);
    // Assess
    expect(first).toEqual({ givenBack: false, chance: 0 });
    expect(later).toEqual({ givenBack: false, chance: 0 });
  });

  it('is given back while the chance of failing this often without fault stays at or above the bound', () => {
    // Prepare: a downstream failing half its calls.
    let chance = 1;
    const givenBack: boolean[] = [];
    // Act
    for (let failure = 0; failure < 21; failure++) {
      const step = loneFailure(chance, 0.5);
      givenBack.push(step.givenBack);
      chance = step.chance;
    }
    // Assess: 0.5^19 ≈ 1.9e-6 is given back, 0.5^20 ≈ 9.5e-7 is not.
    expect(FAULTLESS_CHANCE_BOUND).toBe(1e-6);
    expect(givenBack.indexOf(false)).toBe(19);
    expect(givenBack.slice(19)).toEqual([false, false]);
    expect(loneFailure(FAULTLESS_CHANCE_BOUND, 1)).toEqual({
      givenBack: true,
      chance: FAULTLESS_CHANCE_BOUND,
    });
  });
});
