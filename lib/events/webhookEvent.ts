import type { RecordStateChanged } from './types.ts';

/** What a webhook's body and an event feed entry say of a change: the contract's event, no owner, no personal data. */
export type WebhookEventData = Pick<
  RecordStateChanged,
  | 'recordId'
  | 'kind'
  | 'state'
  | 'previousState'
  | 'attempts'
  | 'sequence'
  | 'downstreamId'
  | 'error'
  | 'FrameNum'
  | 'DealerId'
  | 'test'
>;

/**
 * A change of state as a client receives it, in the Standard Webhooks payload shape: the body of its webhook, and
 * (with its `id`) an entry of its event feed.
 */
export interface WebhookEvent {
  /** `record.<state>`: `record.delivered`, `record.rejected`, `record.failed`, `record.accepted` (a redrive). */
  type: `record.${RecordStateChanged['state']}`;
  /** When the state changed (ISO 8601, UTC). */
  timestamp: string;
  data: WebhookEventData;
}

/**
 * The id of a change as a client sees it: the `webhook-id` header on every try of its webhook, and `id` in the
 * event feed. The same on every copy of the change, so a receiver drops the copies it has seen.
 *
 * @example
 * webhookIdOf(event) // '3f0c…:2026-11-22T08:03:12.345Z'
 */
export const webhookIdOf = (event: Pick<RecordStateChanged, 'eventId'>): string => event.eventId;

/**
 * The client's view of a published change: only the fields the contract names, in its order; the optional ones only
 * when they apply.
 *
 * @example
 * JSON.stringify(webhookEventOf(event)) // '{"type":"record.delivered","timestamp":"…","data":{"recordId":"…",…}}'
 */
export const webhookEventOf = (event: RecordStateChanged): WebhookEvent => {
  const data: WebhookEventData = {
    recordId: event.recordId,
    kind: event.kind,
    state: event.state,
    previousState: event.previousState,
    attempts: event.attempts,
    sequence: event.sequence,
  };
  if (event.downstreamId !== undefined) data.downstreamId = event.downstreamId;
  if (event.error !== undefined) data.error = event.error;
  if (event.FrameNum !== undefined) data.FrameNum = event.FrameNum;
  if (event.DealerId !== undefined) data.DealerId = event.DealerId;
  // A test record's change says so (docs/API.md, "Test mode"); a live one's shape is unchanged.
  if (event.test === true) data.test = true;
  return { type: `record.${event.state}`, timestamp: event.at, data };
};
