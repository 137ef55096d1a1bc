import { ConsoleUnauthenticatedError } from './errors.ts';

/** RFC 6750's `Bearer <b64token>`: the scheme in any case, one space, the token's characters only. */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The bearer token of an `Authorization` header (lower-case header names, as httpHeaderNormalizer leaves them).
 * The console sends its ID token so, never in a cookie: a cross-site request carries no token and cannot act.
 *
 * @throws ConsoleUnauthenticatedError when there is none, or the header holds something else.
 * @example
 * bearerTokenOf({ authorization: 'Bearer eyJ…' }) // 'eyJ…'
 */
export const bearerTokenOf = (headers: Readonly<Record<string, string | undefined>> | null): string => {
  const header = headers?.authorization;
  if (!header)
    throw new ConsoleUnauthenticatedError('a bearer token is required in the Authorization header');
  const match = BEARER.exec(header);
  if (!match) throw new ConsoleUnauthenticatedError('the Authorization header does not hold a bearer token');
  return match[1];
};
