import { describe, expect, it } from 'vitest';
import { retryableStatus, retryDelayMs, webhookRetrySettings } from '../../scripts/local/webhookRetry.ts';

describe('the local event bus retry policy (as EventBridge API destinations)', () => {
  it('retries 401, 407, 408, 409, 429 and 5xx, and no other answer', () => {
    // Act
    const retried = [
      100, 200, 204, 301, 400, 401, 403, 404, 407, 408, 409, 410, 422, 429, 500, 502, 503, 504, 599,
    ].filter(retryableStatus);
    // Assess
    expect(retried).toEqual([401, 407, 408, 409, 429, 500, 502, 503, 504, 599]);
  });

  it('doubles the delay from the base up to the cap, half of it random', () => {
    const settings = { baseMs: 1000, capMs: 60_000 };
    expect([1, 2, 3, 4, 7, 8, 30].map((attempts) => retryDelayMs(attempts, settings, () => 1))).toEqual([
      1000, 2000, 4000, 8000, 60_000, 60_000, 60_000,
    ]);
    expect([1, 2, 7].map((attempts) => retryDelayMs(attempts, settings, () => 0))).toEqual([
      500, 1000, 30_000,
    ]);
  });

  it('reads its settings from the environment, EventBridge’s defaults otherwise', () => {
    expect(webhookRetrySettings({})).toEqual({
      baseMs: 1000,
      capMs: 60_000,
      maxAgeMs: 86_400_000,
      maxAttempts: 185,
      timeoutMs: 5000,
    });
    expect(
      webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_BASE_MS: '50', LOCAL_WEBHOOK_MAX_AGE_SECONDS: '60' }),
    ).toMatchObject({
      baseMs: 50,
      maxAgeMs: 60_000,
    });
    expect(() => webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_CAP_MS: '0' })).toThrow(
      'setting LOCAL_WEBHOOK_RETRY_CAP_MS must be a whole number of at least 1',
    );
  });
});
