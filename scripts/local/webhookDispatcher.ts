/**
 * Delivers the local event bus's pending deliveries to the webhooks: POST of the event envelope with the secret
 * header, retries with backoff as EventBridge does for an API destination, the dead directory when given up.
 * Every delivery runs on its own timer and each client has its own rate limit, so a slow or down webhook only
 * delays its own client's events.
 */
import { WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { retryableStatus, retryDelayMs, type WebhookRetrySettings } from './webhookRetry.ts';
import type { WebhookDelivery, WebhookStore } from './webhookStore.ts';

/** Where a client's events go, and how to call it. */
export interface WebhookRoute {
  /** The URL actually called (the declared one, or the sandbox receiver's `/hooks/<client>`). */
  url: string;
  /** The value of the client's webhook secret, sent in {@link WEBHOOK_SECRET_HEADER}. */
  secret: string;
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
  settings: WebhookRetrySettings;
  log?: WebhookLog;
  /** For tests: the jitter's random source. */
  random?: () => number;
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
  const stopping = new AbortController();
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  /** Per client: the earliest time the next call may start (a rough rate limit). */
  const nextSlot = new Map<string, number>();

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

  /** Reserves the client's next call slot; returns when it starts (now, or later when the client is busy). */
  const slotFor = (client: string, rate: number): number => {
    const now = Date.now();
    const start = Math.max(now, nextSlot.get(client) ?? 0);
    nextSlot.set(client, start + 1000 / Math.max(rate, 0.001));
    return start;
  };

  const finish = async (delivery: WebhookDelivery, outcome: 'delivered' | 'dropped', status?: number) => {
    await store.remove(delivery.id);
    log({
      level: outcome === 'delivered' ? 'INFO' : 'WARN',
      message:
        outcome === 'delivered' ? 'webhook delivered' : 'webhook event dropped: the client has no webhook',
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
      if (!slotTaken) {
        const start = slotFor(delivery.client, route.rateLimitPerSecond);
        if (start > Date.now()) return schedule(delivery, start, true);
      }

      const outcome = await call(route, delivery);
      if (stopping.signal.aborted) return; // cut short by stop(): not an attempt, the file stays pending
      delivery.attempts += 1;
      if (outcome.ok) return await finish(delivery, 'delivered', outcome.status);
      delivery.lastError = outcome.error;
      if (!outcome.retryable) return await giveUp(delivery, 'not retryable');
      const now = Date.now();
      if (delivery.attempts >= settings.maxAttempts) return await giveUp(delivery, 'maximum attempts');
      const next = now + retryDelayMs(delivery.attempts, settings, random);
      if (next - delivery.createdAt >= settings.maxAgeMs) return await giveUp(delivery, 'maximum event age');
      delivery.nextAttemptAt = next;
      await store.save(delivery);
      log({
        level: 'WARN',
        message: 'webhook attempt failed: retrying',
        eventId: delivery.id,
        client: delivery.client,
        attempts: delivery.attempts,
        lastError: delivery.lastError,
        retryInMs: next - now,
      });
      schedule(delivery, next);
    } catch (error) {
      // The store failed (disk full?): try again later rather than lose the event.
      log({
        level: 'ERROR',
        message: 'webhook delivery bookkeeping failed: retrying',
        eventId: delivery.id,
        client: delivery.client,
        errorName: error instanceof Error ? error.name : typeof error,
      });
      schedule(delivery, Date.now() + settings.capMs);
    }
  };

  const call = async (
    route: WebhookRoute,
    delivery: WebhookDelivery,
  ): Promise<{ ok: boolean; retryable: boolean; status?: number; error?: string }> => {
    try {
      const response = await fetch(route.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'dealer-gateway-local-event-bus',
          [WEBHOOK_SECRET_HEADER]: route.secret,
        },
        body: JSON.stringify(delivery.envelope),
        redirect: 'manual', // EventBridge does not follow redirects (3xx is not retried)
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(settings.timeoutMs)]),
      });
      await response.body?.cancel().catch(() => {});
      const ok = response.status >= 200 && response.status < 300;
      return {
        ok,
        retryable: !ok && retryableStatus(response.status),
        status: response.status,
        error: `HTTP ${response.status}`,
      };
    } catch (error) {
      // A timeout or a connection failure: retried, as EventBridge does.
      const name = error instanceof Error ? error.name : typeof error;
      const code = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retryable: true, error: code ? `${name} (${code})` : name };
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
