import { feedEventById } from '../feed/feedEntry.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { lastEventIdOf } from '../records/stateChange.ts';
import { getRecordState } from '../store/statusRecords.ts';
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

/** Why a record's last event was not resent (see {@link RESEND_REFUSALS}). */
export type ResendRefusal = 'noRecord' | 'otherClient' | 'noEvent' | 'noWebhook' | 'expired';

/** What resending a record's last event came to; `client` is the record's. */
export type RecordResendResult =
  | { sent: true; client: string; webhookId: string; outcome: AttemptOutcome }
  | { sent: false; client?: string; why: ResendRefusal };

/** Each refusal as the console (409, 404) and `npm run webhook-secret -- resend` say it. */
export const RESEND_REFUSALS: Readonly<Record<ResendRefusal, string>> = {
  noRecord: 'no record with this id',
  otherClient: 'the record is not of this client',
  noEvent: 'the record has no event yet: nothing to resend',
  noWebhook: "the record's client declares no webhook",
  expired: "the record's last event is older than the event feed keeps (30 days): it cannot be resent",
};

const plausibleRecordId = new RegExp(RECORD_ID_PATTERN);

/**
 * Sends a record's last event (its latest change of state) again to its client's webhook with the same `webhook-id`
 * ({@link resendEvent}): what the console's "Resend webhook" and `npm run webhook-secret -- resend` both do. Given
 * `client`, a record of another client is refused before anything is sent (an operator's tool names the client it
 * means). Reads the record without its personal fields.
 *
 * @example
 * await resendLastEvent('3f0c…', { client: 'example-dealer' }) // { sent: true, client, webhookId: '3f0c…:2026-…', outcome }
 */
export const resendLastEvent = async (
  recordId: string,
  options: { client?: string } = {},
): Promise<RecordResendResult> => {
  const status = plausibleRecordId.test(recordId) ? await getRecordState(recordId) : undefined;
  if (!status) return { sent: false, why: 'noRecord' };
  const client = status.owner;
  if (options.client !== undefined && options.client !== client)
    return { sent: false, client, why: 'otherClient' };
  const eventId = lastEventIdOf(status);
  if (!eventId) return { sent: false, client, why: 'noEvent' };
  return { ...(await resendEvent({ recordId, client, eventId })), client };
};
