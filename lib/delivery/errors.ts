/** A delivery failed transiently and will be retried after the backoff the message's visibility now holds. */
export class DeliveryRetryLater extends Error {
  constructor(attempt: number, delaySeconds: number) {
    super(`attempt ${attempt} failed transiently; next in ${delaySeconds} s`);
    this.name = 'DeliveryRetryLater';
  }
}

/** A message that is not a queued record (never written by this service). */
export class MalformedMessageError extends Error {
  constructor() {
    super('message body is not a queued record');
    this.name = 'MalformedMessageError';
  }
}

/**
 * The message's downstream is held (an outage, or the Salesforce allowance): the record waits without spending
 * a try, its message hidden until about the next probe; the batch reports the message as failed so SQS keeps it.
 */
export class DeliveryHeld extends Error {
  constructor(heldSince: string, delaySeconds: number) {
    super(`downstream held since ${heldSince}; back in ${delaySeconds} s`);
    this.name = 'DeliveryHeld';
  }
}
