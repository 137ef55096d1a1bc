/** A delivery failed transiently and will be retried after the backoff the message's visibility now holds. */
export class DeliveryRetryLater extends Error {
  constructor(attempt: number, delaySeconds: number) {
    super(`attempt ${attempt} failed transiently; next in ${delaySeconds} s`);
    this.name = 'DeliveryRetryLater';
  }
}

/** The last attempt failed transiently: the record is `failed` and SQS moves the message to the dead-letter queue. */
export class DeliveryAttemptsExhausted extends Error {
  constructor(attempts: number) {
    super(`all ${attempts} attempts failed; the message goes to the dead-letter queue`);
    this.name = 'DeliveryAttemptsExhausted';
  }
}

/** A message that is not a queued record (never written by this service). */
export class MalformedMessageError extends Error {
  constructor() {
    super('message body is not a queued record');
    this.name = 'MalformedMessageError';
  }
}
