import { jsonResponse } from '../http/responses.ts';
import type { ErrorShape } from '../http/shapes.ts';
import { statusShape } from '../http/shapes.ts';
import { BEARER_REALM } from './constants.ts';

/**
 * How the console API answers what went wrong: `{"message"}` as the status look-ups do, and on a
 * 401 the `WWW-Authenticate: Bearer` challenge (RFC 6750) that tells the console to sign in again.
 */
export const consoleShape: ErrorShape = {
  refused: (statusCode, reason) =>
    jsonResponse(
      statusCode,
      { message: reason },
      statusCode === 401 ? { 'www-authenticate': `Bearer realm="${BEARER_REALM}"` } : {},
    ),
  unexpected: statusShape.unexpected,
};
