/** How long a held downstream's message stays hidden: not before the next probe, growing with the hold, within SQS's 12 hours. */
import { describe, expect, it } from 'vitest';
import { heldVisibilitySeconds, MAX_HELD_VISIBILITY_SECONDS } from '../../lib/outage/heldVisibility.ts';

const T0 = Date.parse('2026-11-27T03:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

describe('heldVisibilitySeconds', () => {
  it('hides a message at least until the next probe, and never less than a probe period', () => {
    expect(heldVisibilitySeconds({ heldSince: iso(0), until: iso(30) }, at(5), 30)).toBe(30);
    expect(heldVisibilitySeconds({ heldSince: iso(0), until: iso(90) }, at(10), 30)).toBe(80);
  });

  it('grows with the hold: half as long again as it has lasted', () => {
    expect(heldVisibilitySeconds({ heldSince: iso(0), until: iso(3630) }, at(3600), 30)).toBe(1800);
  });

  it('stays within the 12 hours SQS allows', () => {
    expect(heldVisibilitySeconds({ heldSince: iso(0), until: iso(86_430) }, at(86_400 * 3), 30)).toBe(
      MAX_HELD_VISIBILITY_SECONDS,
    );
    expect(MAX_HELD_VISIBILITY_SECONDS).toBeLessThan(12 * 60 * 60);
  });

  it('keeps a message received under 50 times over a 14-day hold, far below a maxReceiveCount of 100', () => {
    // Prepare: one message, handed back each time it comes round.
    let now = 0;
    let receives = 0;
    // Act
    while (now < 14 * 86_400) {
      receives++;
      const until = Math.ceil(now / 30) * 30 + 30;
      now += heldVisibilitySeconds({ heldSince: iso(0), until: iso(until) }, at(now), 30);
    }
    // Assess
    expect(receives).toBeGreaterThan(20);
    expect(receives).toBeLessThan(60);
  });
});
