/**
 * The AWS webhook dispatcher's work on one queued event: the bus's rule puts each state change of a client with a
 * webhook on the webhook queue; this signs it (Standard Webhooks) and posts it, once. A failed try waits for its
 * retry window hidden in the queue (ChangeMessageVisibility: up to 12 h a time, within SQS's limit), a 410
 * disables the client's webhook, and after the last try the message is left to reach the dead-letter queue. While
 * the client's receiver is timing out, the event is held back as a failed try without a call, but for the one probe
 * (lib/webhooks/slowReceivers.ts), so that a slow receiver never holds every dispatcher invocation.
 */
import type { SQSRecord } from 'aws-lambda';
import { clientNamed } from '../clients/clientsConfig.ts';
import { DEFAULT_WEBHOOK_RATE_LIMIT } from '../clients/webhookRules.cjs';
import type { RecordStateChanged } from '../events/types.ts';
import { type WebhookEvent, webhookEventOf, webhookIdOf } from '../events/webhookEvent.ts';
import { failSpan, inSpan } from '../observability/tracing.ts';
import { type AttemptOutcome, attemptWebhook } from './attempt.ts';
import type { WebhookSwitch } from './disabledWebhooks.ts';
import type { RateLimiter } from './rateLimit.ts';
import { nextAttemptAt, type RetrySchedule, WEBHOOK_RETRY_SCHEDULE } from './retrySchedule.ts';
import { signingSecrets, type WebhookSecrets } from './secrets.ts';
import { signWebhook } from './signing.ts';
import type { SlowReceivers, TryPermit } from './slowReceivers.ts';
import type { WebhookSummaries } from './webhookSummary.ts';

/** SQS's longest visibility timeout: 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

/** A client's webhook as the dispatcher calls it. */
export interface WebhookTarget {
  url: string;
  rateLimitPerSecond: number;
}

/** What the dispatcher did with one message (for logs and metrics: ids and statuses, never the body). */
export type DispatchResult =
  | { outcome: 'delivered' | 'disabled' | 'gone' | 'dropped'; client?: string; status?: number }
  | {
      outcome: 'retry' | 'givenUp' | 'heldBack';
      client: string;
      status?: number;
      error: string;
      retryInSeconds?: number;
    };

/** Why an event was held back without a call. */
export const HELD_BACK = "held back: the client's receiver is timing out";

/** A webhook attempt as the record's story keeps it (lib/records/story.ts). */
export interface WebhookAttemptNote {
  at: string;
  client: string;
  webhookId: string;
  status: number | null;
  durationMs: number;
}

export interface DispatchDependencies {
  /**
   * Notes each attempt in its record's story (lib/store/webhookStory.ts); its failure is logged by it and never
   * fails the webhook. Without it nothing is noted.
   */
  noteAttempt?(recordId: string, note: WebhookAttemptNote): Promise<void>;
  targetOf(client: string): WebhookTarget | undefined;
  secretsOf(client: string): Promise<WebhookSecrets>;
  flags: WebhookSwitch;
  limiter: RateLimiter;
  /** Where each call made is noted for the console's "Webhooks" page (lib/webhooks/webhookSummary.ts); none: not noted. */
  summaries?: WebhookSummaries;
  /** The receivers timing out; without it every event is tried. */
  slowReceivers?: SlowReceivers;
  /** Hides the message for `seconds` (its retry time). */
  retryIn(record: SQSRecord, seconds: number): Promise<void>;
  rotationWindowMs: number;
  schedule?: RetrySchedule;
  timeoutMs?: number;
  now?: () => number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The configured webhook of a client (config/clients.json), or undefined.
 *
 * @example
 * configuredTarget('example-dealer') // { url: 'https://…', rateLimitPerSecond: 10 }
 */
export const configuredTarget = (client: string): WebhookTarget | undefined => {
  const webhook = clientNamed(client)?.webhook;
  return webhook
    ? { url: webhook.url, rateLimitPerSecond: webhook.rateLimitPerSecond ?? DEFAULT_WEBHOOK_RATE_LIMIT }
    : undefined;
};

const eventOfMessage = (body: string): RecordStateChanged | undefined => {
  try {
    const detail = (JSON.parse(body) as { detail?: unknown }).detail as RecordStateChanged | undefined;
    return detail && typeof detail.client === 'string' && typeof detail.eventId === 'string'
      ? detail
      : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Signs one event's body (Standard Webhooks, `webhook-id` the event's id: the same on every try and on a resend) and
 * posts it once to the client's webhook, then notes the attempt (status, duration) in the record's story. The one
 * way an event is posted: the dispatcher's tries and the console's resend (lib/webhooks/resend.ts).
 *
 * @example
 * await postEvent(webhookEventOf(event), webhookIdOf(event), { recordId, client, target, secrets, rotationWindowMs });
 */
export const postEvent = async (
  payload: WebhookEvent,
  webhookId: string,
  post: {
    recordId: string;
    client: string;
    target: WebhookTarget;
    secrets: WebhookSecrets;
    rotationWindowMs: number;
    timeoutMs?: number;
    now?: () => number;
    noteAttempt?: DispatchDependencies['noteAttempt'];
  },
): Promise<AttemptOutcome> => {
  const now = post.now ?? Date.now;
  const at = new Date(now());
  const body = JSON.stringify(payload);
  const headers = signWebhook({
    id: webhookId,
    body,
    secrets: signingSecrets(post.secrets, at, post.rotationWindowMs),
    at,
  });
  const startedAt = performance.now();
  const result = await attemptWebhook({ url: post.target.url, body, headers, timeoutMs: post.timeoutMs });
  await post.noteAttempt?.(post.recordId, {
    at: at.toISOString(),
    client: post.client,
    webhookId,
    status: result.status ?? null,
    durationMs: Math.round(performance.now() - startedAt),
  });
  return result;
};

/**
 * Signs and posts one queued event and resolves to what became of it: done with (delivered, dropped, disabled),
 * `retry` when it is to be tried again (its visibility already set; the dispatcher then reports it failed with a
 * `WebhookRetryLaterError`, lib/webhooks/errors.ts) or `givenUp`. It throws when the try could not be made (the
 * message comes back after the queue's visibility timeout).
 *
 * @example
 * await dispatchWebhookMessage(record, { targetOf: configuredTarget, secretsOf: loadAwsWebhookSecrets, flags, limiter, retryIn, rotationWindowMs });
 */
export const dispatchWebhookMessage = async (
  record: SQSRecord,
  deps: DispatchDependencies,
): Promise<DispatchResult> => {
  const now = deps.now ?? Date.now;
  const event = eventOfMessage(record.body);
  if (!event) return { outcome: 'dropped' };
  const client = event.client;
  const target = deps.targetOf(client);
  if (!target) return { outcome: 'dropped', client };
  if (await deps.flags.disabled(client)) return { outcome: 'disabled', client };

  // When this try is to come again if it fails: the try's number is the message's receive count, and the schedule
  // counts from its first receive.
  const attempts = Number(record.attributes.ApproximateReceiveCount ?? '1');
  const firstAt = Number(
    record.attributes.ApproximateFirstReceiveTimestamp ?? record.attributes.SentTimestamp ?? now(),
  );
  const next = nextAttemptAt(firstAt, attempts, deps.schedule ?? WEBHOOK_RETRY_SCHEDULE, deps.random);
  /** Hides the message until `at`: its retry window's draw. */
  const retryAt = async (at: number): Promise<number> => {
    const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil((at - now()) / 1000)));
    await deps.retryIn(record, seconds);
    return seconds;
  };

  // The last try always goes out; any other waits for its next window while the receiver is timing out.
  const permit: TryPermit = next === undefined ? 'try' : (deps.slowReceivers?.admit(client) ?? 'try');
  if (permit === 'holdBack' && next !== undefined)
    return { outcome: 'heldBack', client, error: HELD_BACK, retryInSeconds: await retryAt(next) };

  let result: AttemptOutcome;
  try {
    const wait = deps.limiter.slotFor(client, target.rateLimitPerSecond) - now();
    if (wait > 0) await (deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))))(wait);

    const secrets = await deps.secretsOf(client);
    // Each post is a span of the record's trace, so its traceparent header carries the record's trace id.
    result = await inSpan(
      'webhook post',
      {
        parent: event.traceparent,
        kind: 'producer',
        attributes: { 'record.id': event.recordId, 'webhook.attempt': attempts, 'event.state': event.state },
      },
      async (span) => {
        const posted = await postEvent(webhookEventOf(event), webhookIdOf(event), {
          recordId: event.recordId,
          client,
          target,
          secrets,
          rotationWindowMs: deps.rotationWindowMs,
          timeoutMs: deps.timeoutMs,
          now,
          noteAttempt: deps.noteAttempt,
        });
        if (posted.kind !== 'delivered') failSpan(span, posted.kind, posted.status);
        return posted;
      },
    );
  } catch (error) {
    // No try was made (the secret unreadable): the probe's turn passes on, nothing learnt of the receiver.
    if (permit === 'probe') deps.slowReceivers?.settled(client, 'probe', true);
    throw error;
  }
  if (permit !== 'holdBack')
    deps.slowReceivers?.settled(client, permit, result.kind === 'retry' && result.timedOut === true);
  await deps.summaries?.noteTry(client, result.kind === 'delivered', new Date(now()));
  if (result.kind === 'delivered') return { outcome: 'delivered', client, status: result.status };
  if (result.kind === 'gone') {
    await deps.flags.disable(client, { at: new Date(now()).toISOString(), status: result.status });
    return { outcome: 'gone', client, status: 410 };
  }
  if (next === undefined) return { outcome: 'givenUp', client, status: result.status, error: result.error };
  const seconds = await retryAt(next);
  return { outcome: 'retry', client, status: result.status, error: result.error, retryInSeconds: seconds };
};
