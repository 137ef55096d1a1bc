import { feedEventById } from '../feed/feedEntry.ts';
import type { AttemptOutcome } from './attempt.ts';
import { loadAwsWebhookSecrets } from './awsSecrets.ts';
import { configuredTarget, postEvent } from './dispatch.ts';
import { rotationWindowMs } from './secrets.ts';
import { noteInStory } from './storyNote.ts';

/** What a resend came to. */
export type ResendResult =
  | { sent: true; webhookId: string; outcome: AttemptOutcome }
  /** `noWebhook`: the client declares none; `expired`: the event's feed entry (30 days) is gone. */
  | { sent: false; why: 'noWebhook' | 'expired' };

/**
 * Sends an event of a record again to its client's webhook, once, with the SAME `webhook-id` (the event's id), so a
 * receiver that had it drops the copy: the body is the event as its feed entry keeps it (the feed and the webhook
 * are made by one function), signed and posted by the dispatcher's own {@link postEvent}, the attempt noted in the
 * record's story. The client's disabled flag is not consulted: an operator asks for this one post.
 *
 * @example
 * await resendEvent({ recordId, client: 'example-dealer', eventId: '3f0c…:2026-11-22T08:03:12.345Z' });
 */
export const resendEvent = async (resend: {
  recordId: string;
  client: string;
  eventId: string;
}): Promise<ResendResult> => {
  const target = configuredTarget(resend.client);
  if (!target) return { sent: false, why: 'noWebhook' };
  const stored = await feedEventById(resend.eventId);
  if (!stored) return { sent: false, why: 'expired' };
  const { id, ...payload } = stored;
  const outcome = await postEvent(payload, id, {
    recordId: resend.recordId,
    client: resend.client,
    target,
    secrets: await loadAwsWebhookSecrets(resend.client),
    rotationWindowMs: rotationWindowMs(),
    noteAttempt: noteInStory,
  });
  return { sent: true, webhookId: id, outcome };
};
