import { describe, expect, it } from 'vitest';
import { webhookRetrySettings } from '../../local/webhookRetry.ts';

describe('the local event bus retry settings', () => {
  it('reads its windows from the environment, 3 days of retries by default', () => {
    expect(webhookRetrySettings({})).toEqual({
      baseMs: 1000,
      capMs: 60_000,
      spanMs: 3 * 86_400_000,
      timeoutMs: 5000,
    });
    expect(
      webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_BASE_MS: '50', LOCAL_WEBHOOK_RETRY_SPAN_SECONDS: '60' }),
    ).toMatchObject({ baseMs: 50, spanMs: 60_000 });
    expect(() => webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_CAP_MS: '0' })).toThrow(
      'setting LOCAL_WEBHOOK_RETRY_CAP_MS must be a whole number of at least 1',
    );
  });
});
