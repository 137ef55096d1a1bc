/**
 * A request refused with a reason a person can act on. The message is safe to return to the caller:
 * it names fields and rules, never the values sent.
 */
export class RequestRefused extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RequestRefused';
    this.statusCode = statusCode;
  }
}
