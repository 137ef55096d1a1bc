/**
 * The fault campaign's slow-receiver verdict (soak/slowReceiver.ts): while the test client's webhook receiver
 * answers late, the other webhook clients' events arrive within 5 s (95th percentile) of their records' change of
 * state. The negative controls plant delays past the goal and find the verdict red and the report's row flagged;
 * the slow client's own events, events changed outside the window, copies and unverified posts are not measured.
 */
import { describe, expect, it } from 'vitest';
import { slowReceiverRow } from '../../soak/report.ts';
import { slowReceiverFigures, type TimedHook } from '../../soak/slowReceiver.ts';

const SLOW = 'example-dealer-test';
const from = Date.parse('2026-12-07T10:00:00.000Z');
const to = from + 30_000;

/** An event of `client`'s record changed `changedMs` into the window and received `delayMs` after that. */
const hook = (client: string, n: number, changedMs: number, delayMs: number, verified = true): TimedHook => ({
  client,
  verified,
  receivedAt: new Date(from + changedMs + delayMs).toISOString(),
  event: {
    timestamp: new Date(from + changedMs).toISOString(),
    data: { recordId: `rec-${n}`, state: 'delivered' },
  },
});

/** Twenty of example-dealer's events, each received `delayMs` after its change. */
const others = (delayMs: number) =>
  Array.from({ length: 20 }, (_, n) => hook('example-dealer', n, n * 1000, delayMs));

describe('the slow-receiver verdict', () => {
  it("keeps the promise when the other clients' webhooks arrive within seconds, whatever the slow client's wait", () => {
    // Prepare: others within 0.4 s; the slow client's own events 60 s late (its own, not measured).
    const received = [
      ...others(400),
      ...Array.from({ length: 50 }, (_, n) => hook(SLOW, 100 + n, n * 100, 60_000)),
    ];
    // Act
    const figures = slowReceiverFigures({ received, slowClient: SLOW, from, to });
    // Assess
    expect(figures).toMatchObject({
      events: 20,
      p50Seconds: 0.4,
      p95Seconds: 0.4,
      maxSeconds: 0.4,
      kept: true,
    });
  });

  it("breaks it when the other clients' webhooks wait behind the slow receiver (negative control)", () => {
    // Prepare: others 6 s after their change, past the 5 s goal.
    const received = others(6000);
    // Act
    const figures = slowReceiverFigures({ received, slowClient: SLOW, from, to });
    // Assess
    expect(figures).toMatchObject({ events: 20, p95Seconds: 6, kept: false });
  });

  it('judges the 95th percentile: one event in twenty late is a fault of the campaign, two are a broken promise', () => {
    // Prepare: one late event, then two (a SIGKILL or a held store call may hold up one).
    const oneLate = [...others(300).slice(1), hook('example-dealer', 0, 0, 40_000)];
    const twoLate = [
      ...others(300).slice(2),
      hook('example-dealer', 0, 0, 40_000),
      hook('example-dealer', 1, 1000, 40_000),
    ];
    // Act
    const one = slowReceiverFigures({ received: oneLate, slowClient: SLOW, from, to });
    const two = slowReceiverFigures({ received: twoLate, slowClient: SLOW, from, to });
    // Assess
    expect(one).toMatchObject({ p95Seconds: 0.3, maxSeconds: 40, kept: true });
    expect(two).toMatchObject({ p95Seconds: 40, kept: false });
  });

  it('measures only the first verified arrival of events changed within the window', () => {
    // Prepare: a copy received later, an unverified post, an event changed before the window.
    const received = [
      hook('example-dealer', 1, 1000, 200),
      hook('example-dealer', 1, 1000, 30_000),
      hook('example-dealer', 2, 2000, 50_000, false),
      hook('example-dealer', 3, -5000, 50_000),
    ];
    // Act
    const figures = slowReceiverFigures({ received, slowClient: SLOW, from, to });
    // Assess
    expect(figures).toMatchObject({ events: 1, maxSeconds: 0.2, kept: true });
  });

  it("shows the figures in the report's table, flagged when the promise is broken", () => {
    // Act
    const kept = slowReceiverRow(slowReceiverFigures({ received: others(400), slowClient: SLOW, from, to }));
    const broken = slowReceiverRow(
      slowReceiverFigures({ received: others(6000), slowClient: SLOW, from, to }),
    );
    // Assess
    expect(kept).toContain('0.4 s p95');
    expect(kept).not.toContain('<--');
    expect(broken).toContain('6 s p95');
    expect(broken).toContain('<-- broken promise');
  });
});
