/**
 * Delivers the local event bus's pending deliveries to the webhooks: the event in the Standard Webhooks payload
 * shape, signed with the client's secrets (lib/webhooks), retried for 3 days in doubling windows with full jitter,
 * a `410 Gone` disabling the client's webhook, the dead directory once the schedule is used up. Every delivery runs
 * on its own timer and each client has its own rate limit, so a slow or down webhook only delays its own client's
 * events (and never SAP or Salesforce: the bus answered PutEvents long before).
 */
import type { RecordStateChanged } from '../lib/events/types.ts';
import { webhookEventOf, webhookIdOf } from '../lib/events/webhookEvent.ts';
import { attemptWebhook } from '../lib/webhooks/attempt.ts';
import type { WebhookSwitch } from '../lib/webhooks/disabledWebhooks.ts';
import { createRateLimiter } from '../lib/webhooks/rateLimit.ts';
import { nextAttemptAt } from '../lib/webhooks/retrySchedule.ts';
import { rotationWindowMs, signingSecrets, type WebhookSecrets } from '../lib/webhooks/secrets.ts';
import { signWebhook } from '../lib/webhooks/signing.ts';
import type { WebhookRetrySettings } from './webhookRetry.ts';
import type { WebhookDelivery, WebhookStore } from './webhookStore.ts';

/** Where a client's events go, and how to call it. */
export interface WebhookRoute {
  /** The URL actually called (the declared one, or the sandbox receiver's `/hooks/<client>`). */
  url: string;
  /** Roughly how many calls a second this webhook gets at most. */
  rateLimitPerSecond: number;
}

/** A structured log entry: ids, statuses and counts only (the event's detail is never logged). */
export type WebhookLog = (entry: Record<string, unknown>) => void;

/** Structured JSON on stderr (stdout of npm start is kept for its `ready:` line). */
export const stderrLog: WebhookLog = (entry) =>
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), component: 'local-event-bus', ...entry })}\n`,
  );

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  /** The client's webhook now; undefined when it has none (its pending events are then dropped). */
  routeOf: (client: string) => WebhookRoute | undefined;
  /** The client's secrets now (re-read: a rotation reaches a running bus). */
  secretsOf: (client: string) => WebhookSecrets | undefined;
  /** Disabled webhooks (a 410 disables one). */
  flags: WebhookSwitch;
  settings: WebhookRetrySettings;
  log?: WebhookLog;
  /** For tests: the jitter's random source. */
  random?: () => number;
  /** For tests: the clock of the signatures and of the rotation window. */
  now?: () => number;
  /** Default: WEBHOOK_ROTATION_HOURS. */
  rotationWindowMs?: number;
}

export interface WebhookDispatcher {
  /** Schedules a delivery the store holds already. */
  enqueue(delivery: WebhookDelivery): void;
  /** Schedules every pending delivery of the store (at start). Resolves with how many there were. */
  resume(): Promise<number>;
  /** Deliveries scheduled or under way. */
  inFlight(): number;
  /** Cancels timers and attempts under way (an attempt cut short is not counted; its file stays pending). */
  stop(): Promise<void>;
}

/**
 * Starts delivering; nothing happens until `enqueue` or `resume`.
 *
 * @example
 * const dispatcher = createWebhookDispatcher({ store, routeOf, settings: webhookRetrySettings() });
 * await dispatcher.resume();
 */
export const createWebhookDispatcher = (options: WebhookDispatcherOptions): WebhookDispatcher => {
  const { store, routeOf, settings } = options;
  const log = options.log ?? stderrLog;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const windowMs = options.rotationWindowMs ?? rotationWindowMs();
  const stopping = new AbortController();
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const limiter = createRateLimiter();

  /** `slotTaken`: the client's rate-limit slot for this call is reserved already. */
  const schedule = (delivery: WebhookDelivery, at: number, slotTaken = false) => {
    if (stopping.signal.aborted) return;
    clearTimeout(timers.get(delivery.id));
    const timer = setTimeout(
      () => {
        timers.delete(delivery.id);
        const attempt = run(delivery, slotTaken);
        running.add(attempt);
        attempt.finally(() => running.delete(attempt));
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    timers.set(delivery.id, timer);
  };

  const finish = async (
    delivery: WebhookDelivery,
    outcome: 'delivered' | 'dropped' | 'disabled' | 'gone',
    status?: number,
  ) => {
    await store.remove(delivery.id);
    const messages = {
      delivered: 'webhook delivered',
      dropped: 'webhook event dropped: the client has no webhook',
      disabled: "webhook event dropped: the client's webhook is disabled (npm run webhook-secret -- enable)",
      gone: "webhook answered 410 Gone: the client's webhook is disabled until an operator enables it",
    };
    log({
      level: outcome === 'delivered' ? 'INFO' : outcome === 'gone' ? 'ERROR' : 'WARN',
      message: messages[outcome],
      eventId: delivery.id,
      client: delivery.client,
      attempts: delivery.attempts,
      ...(status ? { status } : {}),
    });
  };

  const giveUp = async (delivery: WebhookDelivery, reason: string) => {
    await store.bury(delivery);
    log({
      level: 'ERROR',
      message: 'webhook delivery given up: moved to the dead directory',
      eventId: delivery.id,
      client: delivery.client,
      attempts: delivery.attempts,
      lastError: delivery.lastError,
      reason,
    });
  };

  const run = async (delivery: WebhookDelivery, slotTaken: boolean): Promise<void> => {
    try {
      const route = routeOf(delivery.client);
      if (!route) return await finish(delivery, 'dropped');
      if (await options.flags.disabled(delivery.client)) return await finish(delivery, 'disabled');
      if (!slotTaken) {
        const start = limiter.slotFor(delivery.client, route.rateLimitPerSecond);
        if (start > Date.now()) return schedule(delivery, start, true);
      }
      const secrets = options.secretsOf(delivery.client);
      if (!secrets) throw new Error(`no webhook secret for client "${delivery.client}"`);

      const event = delivery.envelope.detail as unknown as RecordStateChanged;
      const at = new Date(now());
      const body = JSON.stringify(webhookEventOf(event));
      const outcome = await attemptWebhook({
        url: route.url,
        body,
        headers: signWebhook({
          id: webhookIdOf(event),
          body,
          secrets: signingSecrets(secrets, at, windowMs),
          at,
        }),
        timeoutMs: settings.timeoutMs,
        userAgent: 'dealer-gateway-local-event-bus',
        signal: stopping.signal,
      });
      if (stopping.signal.aborted) return; // cut short by stop(): not an attempt, the file stays pending
      delivery.attempts += 1;
      if (outcome.kind === 'delivered') return await finish(delivery, 'delivered', outcome.status);
      if (outcome.kind === 'gone') {
        await options.flags.disable(delivery.client, { at: at.toISOString(), status: outcome.status });
        return await finish(delivery, 'gone', outcome.status);
      }
      delivery.lastError = outcome.error;
      const next = nextAttemptAt(delivery.createdAt, delivery.attempts, settings, random);
      if (next === undefined) return await giveUp(delivery, 'retry schedule used up');
      delivery.nextAttemptAt = next;
      await store.save(delivery);
      log({
        level: 'WARN',
        message: 'webhook attempt failed: retrying',
        eventId: delivery.id,
        client: delivery.client,
        attempts: delivery.attempts,
        lastError: delivery.lastError,
        retryInMs: Math.max(0, next - Date.now()),
      });
      schedule(delivery, next);
    } catch (error) {
      // The store or the secrets file failed: try again later rather than lose the event.
      log({
        level: 'ERROR',
        message: 'webhook delivery bookkeeping failed: retrying',
        eventId: delivery.id,
        client: delivery.client,
        errorName: error instanceof Error ? error.name : typeof error,
        ...(error instanceof Error && error.message.includes('webhook secret')
          ? { error: error.message }
          : {}),
      });
      schedule(delivery, Date.now() + settings.capMs);
    }
  };

  return {
    enqueue: (delivery) => schedule(delivery, delivery.nextAttemptAt),
    async resume() {
      const pending = await store.pending((file) =>
        log({ level: 'ERROR', message: 'unreadable webhook delivery file skipped', file }),
      );
      for (const delivery of pending) schedule(delivery, delivery.nextAttemptAt);
      return pending.length;
    },
    inFlight: () => timers.size + running.size,
    async stop() {
      stopping.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
};
