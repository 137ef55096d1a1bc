/**
 * How the local event bus retries a webhook: lib/webhooks' schedule (3 days, doubling windows, full jitter), with
 * shorter windows by default so that a webhook coming back is called again soon on a developer's machine.
 */
import { positiveInteger } from '../lib/settings/parsers.ts';
import type { RetrySchedule } from '../lib/webhooks/retrySchedule.ts';

export interface WebhookRetrySettings extends RetrySchedule {
  /** One attempt's time limit (ms). LOCAL_WEBHOOK_TIMEOUT_MS, default 5000. */
  timeoutMs: number;
}

/**
 * The retry settings from the environment: LOCAL_WEBHOOK_RETRY_BASE_MS (the first window, default 1000),
 * LOCAL_WEBHOOK_RETRY_CAP_MS (the longest, default 60 000), LOCAL_WEBHOOK_RETRY_SPAN_SECONDS (default 3 days).
 *
 * @example
 * webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_BASE_MS: '50' }).baseMs; // 50
 */
export const webhookRetrySettings = (env: NodeJS.ProcessEnv = process.env): WebhookRetrySettings => ({
  baseMs: positiveInteger('LOCAL_WEBHOOK_RETRY_BASE_MS', env.LOCAL_WEBHOOK_RETRY_BASE_MS, 1000),
  capMs: positiveInteger('LOCAL_WEBHOOK_RETRY_CAP_MS', env.LOCAL_WEBHOOK_RETRY_CAP_MS, 60_000),
  spanMs:
    positiveInteger('LOCAL_WEBHOOK_RETRY_SPAN_SECONDS', env.LOCAL_WEBHOOK_RETRY_SPAN_SECONDS, 3 * 86_400) *
    1000,
  timeoutMs: positiveInteger('LOCAL_WEBHOOK_TIMEOUT_MS', env.LOCAL_WEBHOOK_TIMEOUT_MS, 5000),
});
