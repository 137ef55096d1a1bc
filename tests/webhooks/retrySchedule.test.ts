import { describe, expect, it } from 'vitest';
import {
  nextAttemptAt,
  retryWindow,
  WEBHOOK_RETRY_SCHEDULE,
  webhookAttempts,
} from '../../lib/webhooks/retrySchedule.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** Every attempt's time after the first (at 0), with one random source for every draw. */
const attemptTimes = (random: () => number) => {
  const times = [0];
  for (let made = 1; ; made++) {
    const next = nextAttemptAt(0, made, WEBHOOK_RETRY_SCHEDULE, random);
    if (next === undefined) return times;
    times.push(next);
  }
};

describe('the webhook retry schedule: 3 days, exponential backoff, full jitter', () => {
  it('spans at least 3 days whatever the jitter draws, and ends within 3 days and 12 hours', () => {
    // Act
    const earliest = attemptTimes(() => 0);
    const latest = attemptTimes(() => 0.999_999);
    // Assess
    expect(earliest.length).toBe(webhookAttempts());
    expect(latest.length).toBe(webhookAttempts());
    expect(earliest.at(-1)).toBeGreaterThanOrEqual(3 * DAY);
    expect(latest.at(-1)).toBeLessThan(3 * DAY + 12 * HOUR);
  });

  it('places each retry anywhere in its window (full jitter), the windows doubling from 1 minute to 6 hours', () => {
    // Act
    const windows = Array.from({ length: 12 }, (_, i) => retryWindow(i + 1, WEBHOOK_RETRY_SCHEDULE));
    // Assess
    expect(windows.map((w) => w.lengthMs / 60_000)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360, 360,
    ]);
    for (const [i, w] of windows.slice(1).entries())
      expect(w.startMs).toBe(windows[i].startMs + windows[i].lengthMs);
    expect(nextAttemptAt(1000, 1, WEBHOOK_RETRY_SCHEDULE, () => 0)).toBe(1000);
    expect(nextAttemptAt(1000, 1, WEBHOOK_RETRY_SCHEDULE, () => 0.5)).toBe(31_000);
    expect(nextAttemptAt(1000, 3, WEBHOOK_RETRY_SCHEDULE, () => 0.999_999)).toBe(1000 + 3 * 60_000 + 239_999);
  });

  it('never waits more than 12 hours between two tries (SQS visibility limit) and has none after the last', () => {
    // Act
    const gaps = [attemptTimes(() => 0), attemptTimes(() => 0.999_999)].flatMap((times) =>
      times.slice(1).map((t, i) => t - times[i]),
    );
    // Assess
    expect(Math.max(...gaps)).toBeLessThanOrEqual(12 * HOUR);
    expect(nextAttemptAt(0, webhookAttempts())).toBeUndefined();
    expect(nextAttemptAt(0, 0)).toBeUndefined();
  });
});
