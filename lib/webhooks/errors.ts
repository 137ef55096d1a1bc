/**
 * The errors the webhook dispatcher reports a message with: each makes the batch report the message as failed, so
 * SQS keeps it; what differs is whether it comes back for another try.
 */
import { GatewayError } from '../errors.ts';

/** A try that failed and is due again later: the message's visibility was set to its retry time. */
export class WebhookRetryLaterError extends GatewayError {
  override name = 'WebhookRetryLaterError';
  constructor(message: string) {
    super('webhook-retry-later', message, { retryable: true });
  }
}

/** A try that failed for good (no retry left): the message stays, and its next receive moves it to the DLQ. */
export class WebhookGivenUpError extends GatewayError {
  override name = 'WebhookGivenUpError';
  constructor(message: string) {
    super('webhook-given-up', message);
  }
}
