import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';

const MAX_KEY_LENGTH = 255;

/** The caller's `Idempotency-Key` header (lower-cased by the header normaliser), checked for size. */
export const idempotencyKeyOf = (event: APIGatewayProxyEvent): string | undefined => {
  const key = event.headers?.['idempotency-key']?.trim();
  if (!key) return undefined;
  if (key.length > MAX_KEY_LENGTH)
    throw new RequestRefusedError(400, `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters`);
  return key;
};
