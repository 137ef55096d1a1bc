import { GatewayError } from '../errors.ts';

/**
 * No valid session: the bearer token is missing, malformed, signed by another key, issued by another issuer or for
 * another client, expired, or its sign-in is older than 12 hours. Answered 401 with `WWW-Authenticate: Bearer`.
 * The message says which, never the token.
 */
export class ConsoleUnauthenticatedError extends GatewayError {
  override name = 'ConsoleUnauthenticatedError';
  constructor(message: string, options?: ErrorOptions) {
    super('console-unauthenticated', message, options);
  }
}

/** The person's role may not do this (a support user's action): answered 403 before anything changes. */
export class ConsoleForbiddenError extends GatewayError {
  override name = 'ConsoleForbiddenError';
  constructor(message: string) {
    super('console-forbidden', message);
  }
}

/**
 * The provider's discovery document or published keys could not be read: no token can be judged now, which is no
 * fault of the caller's (503, retry).
 */
export class ConsoleKeysUnavailableError extends GatewayError {
  override name = 'ConsoleKeysUnavailableError';
  constructor(message: string, options?: ErrorOptions) {
    super('console-keys-unavailable', message, { ...options, retryable: true });
  }
}
