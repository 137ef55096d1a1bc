import { GatewayError } from '../errors.ts';

/**
 * A request refused with a reason a person can act on. The message is safe to return to the caller:
 * it names fields and rules, never the values sent.
 *
 * It carries its HTTP status itself, unlike the product's other errors (whose statuses lib/http/statusOf.ts
 * decides): it is thrown only by the parsers of the request (its headers, query, body and the middlewares), which
 * are the HTTP edge, and a refusal is an HTTP answer by nature: 400, 403, 404, 413 or 415, and whatever 4xx
 * middy's parsers answer. A code per status would only spell the same statuses again.
 *
 * @example
 * throw new RequestRefusedError(400, 'FrameNum is required');
 */
export class RequestRefusedError extends GatewayError {
  override name = 'RequestRefusedError';
  readonly statusCode: number;
  constructor(statusCode: number, message: string, options?: ErrorOptions) {
    super('request-refused', message, options);
    this.statusCode = statusCode;
  }
}
