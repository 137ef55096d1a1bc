import { GatewayError } from '../errors.ts';

/** A delivery failed transiently and will be retried after the backoff the message's visibility now holds. */
export class DeliveryRetryLaterError extends GatewayError {
  override name = 'DeliveryRetryLaterError';
  constructor(attempt: number, delaySeconds: number) {
    super('delivery-retry-later', `attempt ${attempt} failed transiently; next in ${delaySeconds} s`, {
      retryable: true,
    });
  }
}

/** A message that is not a queued record (never written by this service): no retry makes it one. */
export class MalformedMessageError extends GatewayError {
  override name = 'MalformedMessageError';
  constructor() {
    super('malformed-message', 'message body is not a queued record');
  }
}

/**
 * The message's downstream is held (an outage, or the Salesforce allowance): the record waits without spending
 * a try, its message hidden until about the next probe; the batch reports the message as failed so SQS keeps it.
 */
export class DeliveryHeldError extends GatewayError {
  override name = 'DeliveryHeldError';
  constructor(heldSince: string, delaySeconds: number) {
    super('delivery-held', `downstream held since ${heldSince}; back in ${delaySeconds} s`, {
      retryable: true,
    });
  }
}
