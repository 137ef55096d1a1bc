/**
 * Response Objects the operations share: JSON content, the 409, 422 and 503 answers of both POST operations,
 * and the 403 answer every operation gives without a valid key. Each answers in its operation's shape
 * (`lib/http/shapes.ts`).
 */
import type { ErrorShape } from '../../lib/http/shapes.ts';
import { IdempotencyConflictError, IdempotencyInProgressError } from '../../lib/intake/errors.ts';
import { ref } from './components.ts';
import { bodyOf, example } from './examples.ts';
import type { Json, JsonObject } from './schemaConversion.ts';

/** An operation's 4xx body for a status and a reason, in its shape. */
export type Refused = (status: number, reason: string) => Json;
/** An operation's 4xx content (schema and media type) around some examples. */
export type RefusedContent = (examples: Record<string, JsonObject>) => JsonObject;

/**
 * `application/json` content: a schema and its named examples.
 *
 * @example
 * jsonContent(ref('NotFound'), { notFound: example('Unknown id', { message: 'no case with this CrmId' }) })
 */
export const jsonContent = (schema: JsonObject, examples: Record<string, JsonObject>): JsonObject => ({
  'application/json': { schema, examples },
});

/**
 * A Response Object; headers, when given, before the content.
 *
 * @example
 * response('The body is larger than 64 KiB.', refusedContent({ tooLarge }))
 */
export const response = (description: string, content: JsonObject, headers?: JsonObject): JsonObject =>
  headers === undefined ? { description, content } : { description, headers, content };

const retryAfter: JsonObject = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };

/** The 422 answer of both POST operations, in the operation's shape. */
export const idempotencyConflict = (refused: Refused, refusedContent: RefusedContent): JsonObject =>
  response(
    'The Idempotency-Key was used in the last 24 hours with a different body.',
    refusedContent({
      idempotencyConflict: example(
        'Idempotency-Key reused',
        refused(422, new IdempotencyConflictError().message),
      ),
    }),
  );

/** The 409 answer of both POST operations, in the operation's shape. */
export const idempotencyInProgress = (refused: Refused, refusedContent: RefusedContent): JsonObject =>
  response(
    'A request with this Idempotency-Key is still being processed; retry shortly with the same key and body.',
    refusedContent({
      idempotencyInProgress: example(
        'Idempotency-Key in progress',
        refused(409, new IdempotencyInProgressError().message),
      ),
    }),
  );

/** The 503 answer of both POST operations, in the operation's shape, with `Retry-After`. */
export const queueUnavailable = (unexpected: (status: number) => JsonObject): JsonObject =>
  response(
    'The queue or the store is briefly unavailable; retry after Retry-After seconds (safe: nothing is accepted ' +
      'twice, and what was stored is delivered once).',
    unexpected(503),
    retryAfter,
  );

/**
 * Adds the 403 answer (no valid API key, and any further examples) to an operation, in its contract shape,
 * keeping the answers in status order.
 *
 * @example
 * withRefusal(statusOperation('caseRecord'), 'NotFound', statusShape)
 */
export const withRefusal = (
  operation: JsonObject,
  schema: string,
  shape: ErrorShape,
  more: Record<string, JsonObject> = {},
): JsonObject => {
  const responses = operation.responses as JsonObject;
  const forbidden = response(
    'No valid API key in x-api-key' +
      (Object.keys(more).length > 0 ? ', or a record for a dealer the client is not bound to.' : '.'),
    jsonContent(ref(schema), {
      missingKey: example(
        'No API key',
        bodyOf(shape.refused(403, 'an API key is required in the x-api-key header')),
      ),
      ...more,
    }),
  );
  const ordered = Object.fromEntries(
    Object.entries({ ...responses, '403': forbidden }).sort(([a], [b]) => Number(a) - Number(b)),
  );
  return { ...operation, responses: ordered };
};
