/** How the local event bus retries a webhook, as EventBridge retries an API destination. */
import { positiveInteger } from '../../lib/settings.ts';

export interface WebhookRetrySettings {
  /** First retry delay (ms) before jitter; doubles with each attempt. LOCAL_WEBHOOK_RETRY_BASE_MS, default 1000. */
  baseMs: number;
  /** Longest delay between attempts (ms). LOCAL_WEBHOOK_RETRY_CAP_MS, default 60 000. */
  capMs: number;
  /** Give up once the event is this old (ms). LOCAL_WEBHOOK_MAX_AGE_SECONDS, default 24 h (EventBridge's default). */
  maxAgeMs: number;
  /** Give up after this many attempts. LOCAL_WEBHOOK_MAX_ATTEMPTS, default 185 (EventBridge's default). */
  maxAttempts: number;
  /** One attempt's time limit (ms): EventBridge gives an API destination 5 s. LOCAL_WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
}

/**
 * The retry settings from the environment.
 *
 * @example
 * webhookRetrySettings({ LOCAL_WEBHOOK_RETRY_BASE_MS: '50' }).baseMs; // 50
 */
export const webhookRetrySettings = (env: NodeJS.ProcessEnv = process.env): WebhookRetrySettings => ({
  baseMs: positiveInteger('LOCAL_WEBHOOK_RETRY_BASE_MS', env.LOCAL_WEBHOOK_RETRY_BASE_MS, 1000),
  capMs: positiveInteger('LOCAL_WEBHOOK_RETRY_CAP_MS', env.LOCAL_WEBHOOK_RETRY_CAP_MS, 60_000),
  maxAgeMs:
    positiveInteger('LOCAL_WEBHOOK_MAX_AGE_SECONDS', env.LOCAL_WEBHOOK_MAX_AGE_SECONDS, 86_400) * 1000,
  maxAttempts: positiveInteger('LOCAL_WEBHOOK_MAX_ATTEMPTS', env.LOCAL_WEBHOOK_MAX_ATTEMPTS, 185),
  timeoutMs: positiveInteger('LOCAL_WEBHOOK_TIMEOUT_MS', env.LOCAL_WEBHOOK_TIMEOUT_MS, 5000),
});

/**
 * Whether an answer is worth another attempt. EventBridge retries an API destination on 401, 407, 409, 429 and
 * 5xx (and on timeouts and connection failures, which have no status); not on 1xx, 3xx or any other 4xx. 408
 * (the receiver's own timeout) is a timeout too.
 *
 * @example
 * retryableStatus(503); // true
 * retryableStatus(400); // false
 */
export const retryableStatus = (status: number): boolean =>
  status >= 500 || [401, 407, 408, 409, 429].includes(status);

/**
 * The wait before attempt `attempts + 1`: exponential from `baseMs`, capped, with jitter (half fixed, half
 * random) so that a webhook coming back is not hit by every retry at once.
 *
 * @example
 * retryDelayMs(3, { baseMs: 1000, capMs: 60_000 }, () => 1); // 4000
 */
export const retryDelayMs = (
  attempts: number,
  settings: Pick<WebhookRetrySettings, 'baseMs' | 'capMs'>,
  random: () => number = Math.random,
): number => {
  const ceiling = Math.min(settings.capMs, settings.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
};
