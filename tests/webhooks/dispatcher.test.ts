/**
 * The AWS webhook dispatcher (lib/webhooks/dispatcher.ts, the handler of functions/webhookDispatcher.ts) on real
 * SQS events from fauxqs, the flags in dynalite's records table, posting to the sandbox webhook receiver (a real
 * HTTP server verifying with the official standardwebhooks library).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import { tableWebhookSwitch } from '../../lib/webhooks/disabledWebhooks.ts';
import { createWebhookDispatcher } from '../../lib/webhooks/dispatcher.ts';
import { newWebhookSecret, type WebhookSecrets } from '../../lib/webhooks/secrets.ts';
import { readWebhookSummary } from '../../lib/webhooks/webhookSummary.ts';
import { pollOnce } from '../../local/queuePoller.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../sandbox/webhookReceiver.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let receiver: WebhookReceiver;
let queueUrl: string;
const secrets: Record<string, WebhookSecrets> = {};
const secretOf = (client: string) => {
  secrets[client] ??= { current: newWebhookSecret() };
  return secrets[client];
};

beforeAll(async () => {
  aws = await isolatedAws();
  queueUrl = aws.resources.queues.WebhookQueue.url;
  process.env.WEBHOOK_QUEUE_URL = queueUrl;
  process.env.WEBHOOK_SECRETS_PREFIX = 'dealer-gateway/test/webhooks/';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  receiver = await startWebhookReceiver({ secretsOf: (client) => [secretOf(client).current] });
});
afterAll(async () => {
  await receiver?.stop();
});
beforeEach(async () => {
  await aws.drain(queueUrl);
  await fetch(`${receiver.url}/hooks/_faults`, { method: 'DELETE' });
});

let records = 0;
/** A state change of one of `client`'s records, as the bus's rule queues it (the EventBridge envelope). */
const queueEvent = async (client: string) => {
  records += 1;
  const at = new Date().toISOString();
  const detail: RecordStateChanged = {
    eventId: `rec-${records}:${at}`,
    recordId: `rec-${records}`,
    kind: 'caseRecord',
    client,
    state: 'delivered',
    previousState: 'accepted',
    attempts: 1,
    sequence: 2,
    at,
    acceptedAt: at,
    downstreamId: '5003X0000000001',
  };
  const envelope = {
    version: '0',
    id: `env-${records}`,
    'detail-type': 'Record state changed',
    source: 'dealer-gateway',
    detail,
  };
  await aws.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(envelope) }));
  return detail;
};

/** The dispatcher as deployed, but for the URLs (the receiver's) and the secrets (held here). */
const dispatcher = (random = () => 0.5) =>
  createWebhookDispatcher({
    targetOf: (client) => ({ url: `${receiver.url}/hooks/${client}`, rateLimitPerSecond: 100 }),
    secretsOf: async (client) => secretOf(client),
    random,
  });
const poll = (handler = dispatcher()) =>
  pollOnce({
    sqs: aws.sqs,
    queueUrl,
    handler: (event: SQSEvent) => handler(event, {} as Context) as Promise<SQSBatchResponse>,
  });
const visibleNow = async () =>
  (
    await aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 1 }),
    )
  ).Messages?.length ?? 0;

describe('the webhook dispatcher', () => {
  it("signs each queued event with its client's secret and posts it to that client's webhook only", async () => {
    // Prepare
    const mine = await queueEvent('north');
    const theirs = await queueEvent('south');
    // Act
    const polled = await poll();
    // Assess
    expect(polled).toEqual({ received: 2, deleted: 2, failed: 0 });
    const north = receiver.received('north');
    expect(north).toEqual([
      expect.objectContaining({
        verified: true,
        webhookId: mine.eventId,
        event: expect.objectContaining({
          type: 'record.delivered',
          data: expect.objectContaining({ recordId: mine.recordId, sequence: 2 }),
        }),
      }),
    ]);
    expect(receiver.received('south').map((r) => r.webhookId)).toEqual([theirs.eventId]);
    expect(JSON.stringify(north.map((r) => r.event))).not.toContain('"client"');
  });

  it('hides a failed try until its retry window (ChangeMessageVisibility), then delivers it', async () => {
    // Prepare: one 503; the first retry window is 60 s, the jitter draws its middle, then its start.
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 503, count: 1, client: 'east' }),
    });
    await queueEvent('east');
    // Act
    const first = await poll();
    const hidden = await visibleNow();
    // Assess: reported failed, and not visible again for about 30 s.
    expect(first).toEqual({ received: 1, deleted: 0, failed: 1 });
    expect(hidden).toBe(0);
    expect(receiver.received('east')).toEqual([]);
  });

  it('retries at once when the window draws its start, and the second try is delivered', async () => {
    // Prepare
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 500, count: 1, client: 'west' }),
    });
    const event = await queueEvent('west');
    const handler = dispatcher(() => 0);
    // Act
    const first = await poll(handler);
    const second = await poll(handler);
    // Assess
    expect(first.failed).toBe(1);
    expect(second).toEqual({ received: 1, deleted: 1, failed: 0 });
    expect(receiver.received('west').map((r) => [r.webhookId, r.verified])).toEqual([[event.eventId, true]]);
  });

  it("notes each try in the client's webhook summary for the console: a 500 as a failure, then the success", async () => {
    // Prepare
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 500, count: 1, client: 'summed' }),
    });
    await queueEvent('summed');
    const handler = dispatcher(() => 0);
    const before = new Date();
    // Act
    await poll(handler);
    const afterFailure = await readWebhookSummary('summed', new Date());
    await poll(handler);
    const afterSuccess = await readWebhookSummary('summed', new Date());
    // Assess
    expect(afterFailure).toEqual({ lastFailureAt: expect.any(String), failuresLast24h: 1 });
    expect(Date.parse(afterFailure.lastFailureAt ?? '')).toBeGreaterThanOrEqual(before.getTime());
    expect(afterSuccess).toEqual({
      lastFailureAt: afterFailure.lastFailureAt,
      lastSuccessAt: expect.any(String),
      failuresLast24h: 1,
    });
    expect(String(afterSuccess.lastSuccessAt) >= String(afterFailure.lastFailureAt)).toBe(true);
  });

  it("disables a client's webhook on 410 Gone, drops its events while disabled, and delivers again once enabled", async () => {
    // Prepare
    const flags = tableWebhookSwitch();
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 410, count: 1, client: 'gone' }),
    });
    await queueEvent('gone');
    // Act
    const goneAnswer = await poll();
    const disabled = await flags.disabled('gone');
    await queueEvent('gone');
    const whileDisabled = await poll();
    const receivedWhileDisabled = receiver.received('gone').length;
    const enabled = await flags.enable('gone');
    const after = await queueEvent('gone');
    const afterEnable = await poll();
    // Assess
    expect(goneAnswer).toEqual({ received: 1, deleted: 1, failed: 0 });
    expect(disabled).toMatchObject({ status: 410 });
    expect(whileDisabled).toEqual({ received: 1, deleted: 1, failed: 0 });
    expect(receivedWhileDisabled).toBe(0);
    expect(enabled).toBe(true);
    expect(afterEnable.deleted).toBe(1);
    expect(receiver.received('gone').map((r) => r.webhookId)).toEqual([after.eventId]);
  });

  it("holds back a timing-out receiver's events without a call, one probe a window, and never delays another client's", async () => {
    // Prepare: `slow` answers after 1.5 s, past a try's limit of 300 ms; the first retry window is 1 s, and a probe
    // goes out once per ten try limits at most: every 3 s.
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ delayMs: 1500, count: 100, client: 'slow' }),
    });
    const handler = createWebhookDispatcher({
      targetOf: (client) => ({ url: `${receiver.url}/hooks/${client}`, rateLimitPerSecond: 100 }),
      secretsOf: async (client) => secretOf(client),
      timeoutMs: 300,
      schedule: { baseMs: 1000, capMs: 1000, spanMs: 86_400_000 },
      // Each retry late in its window: the first three stay hidden while the next events are polled.
      random: () => 0.9,
    });
    const callsOfSlow = () => receiver.requests.filter((r) => r.path === '/hooks/slow').length;
    for (let i = 0; i < 3; i++) await queueEvent('slow');
    const timedOut = await poll(handler);
    // Act: while it is timing out, more of its events beside another client's.
    for (let i = 0; i < 5; i++) await queueEvent('slow');
    const quick = await queueEvent('quick');
    const started = Date.now();
    const whileSlow = await poll(handler);
    const whileSlowMs = Date.now() - started;
    const callsWhileSlow = callsOfSlow();
    // Once its probe is due, the receiver answers in time again: one of three new events is its probe.
    await sleep(3100);
    await fetch(`${receiver.url}/hooks/_faults`, { method: 'DELETE' });
    await fetch(`${receiver.url}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ delayMs: 150, count: 1, client: 'slow' }),
    });
    await aws.drain(queueUrl); // the held-back events coming back are not what this step looks at
    for (let i = 0; i < 3; i++) await queueEvent('slow');
    const probed = await poll(handler);
    const callsAfterProbe = callsOfSlow();
    const afterProbe = await queueEvent('slow');
    const answered = await poll(handler);
    // Assess: the first three timed out; then no call to `slow` and no wait for it, `quick` delivered at once.
    expect(timedOut).toEqual({ received: 3, deleted: 0, failed: 3 });
    expect(whileSlow).toEqual({ received: 6, deleted: 1, failed: 5 });
    expect(callsWhileSlow).toBe(3);
    expect(whileSlowMs).toBeLessThan(300);
    expect(receiver.received('quick').map((r) => r.webhookId)).toEqual([quick.eventId]);
    // The probe answered in time and the other two waited for their window; after it, `slow` is tried as any.
    expect(probed).toEqual({ received: 3, deleted: 1, failed: 2 });
    expect(callsAfterProbe).toBe(4);
    expect(answered).toEqual({ received: 1, deleted: 1, failed: 0 });
    expect(receiver.received('slow').map((r) => r.webhookId)).toContain(afterProbe.eventId);
  });
});
