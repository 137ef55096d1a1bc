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
