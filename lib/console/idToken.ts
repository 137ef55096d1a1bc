import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import {
  CLOCK_TOLERANCE_SECONDS,
  CONSOLE_ROLES,
  GROUPS_CLAIM,
  ID_TOKEN_ALGORITHMS,
  MAX_SIGN_IN_AGE_SECONDS,
} from './constants.ts';
import { ConsoleKeysUnavailableError, ConsoleUnauthenticatedError } from './errors.ts';
import type { ConsolePerson, ConsoleRole } from './types.ts';

/** What an ID token is checked against. */
export interface IdTokenCheck {
  /** The issuer the token's `iss` must equal, whose discovery document names the signing keys. */
  issuer: string;
  /** The console's client id, which the token's `aud` must hold. */
  audience: string;
  /** The keys to verify with; default: the issuer's published ones (discovery, then its `jwks_uri`). */
  keys?: JWTVerifyGetKey;
  /** The time to judge expiry and sign-in age at; default now. */
  now?: Date;
}

/** How long the provider's discovery document and keys are waited for. */
const FETCH_TIMEOUT_MS = 5_000;

/**
 * The issuer's published keys, one set per issuer and container: its discovery document is read once (Cognito
 * and oidc-provider publish their keys at different paths), then jose's remote set fetches the keys, caches them
 * and fetches again when a token names a key it does not have (a rotation). A failed discovery is forgotten, so
 * the next request tries again.
 */
const keySets = new Map<string, Promise<JWTVerifyGetKey>>();

const discover = async (issuer: string): Promise<JWTVerifyGetKey> => {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  // A document naming another issuer is not this issuer's (OpenID Connect Discovery §4.3).
  if (document.issuer !== issuer || typeof document.jwks_uri !== 'string')
    throw new Error('discovery document does not name this issuer and its keys');
  return createRemoteJWKSet(new URL(document.jwks_uri), { timeoutDuration: FETCH_TIMEOUT_MS });
};

const publishedKeys = (issuer: string): Promise<JWTVerifyGetKey> => {
  let keys = keySets.get(issuer);
  if (!keys) {
    keys = discover(issuer).catch((error: unknown) => {
      keySets.delete(issuer);
      throw new ConsoleKeysUnavailableError("the sign-in provider's keys could not be read", {
        cause: error,
      });
    });
    keySets.set(issuer, keys);
  }
  return keys;
};

/** Why jose refused a token, in words a person can act on; the token itself is never repeated. */
const refusalOf = (error: errors.JOSEError): string => {
  if (error instanceof errors.JWTExpired) return 'the bearer token has expired: sign in again';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return "the bearer token was not issued by the console's sign-in provider";
    if (error.claim === 'aud') return 'the bearer token was not issued for the console';
    return `the bearer token's ${error.claim} claim is not acceptable`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey)
    return "the bearer token is not signed by the sign-in provider's keys";
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the bearer token is signed with another algorithm';
  return 'the bearer token is not a well-formed ID token';
};

/** Errors that say the keys could not be fetched, not that the token is bad. */
const keysUnreachable = (error: unknown): boolean =>
  error instanceof errors.JWKSTimeout ||
  error instanceof errors.JWKSInvalid ||
  // jose's remote set throws a plain JOSEError for an answer other than 200, and fetch a TypeError offline.
  (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC') ||
  !(error instanceof errors.JOSEError);

/** The console roles among a token's groups (other groups are no console role). */
const rolesOf = (payload: JWTPayload): ConsoleRole[] => {
  const groups = payload[GROUPS_CLAIM];
  if (!Array.isArray(groups)) return [];
  return CONSOLE_ROLES.filter((role) => groups.includes(role));
};

/**
 * Verifies an OpenID Connect ID token for the console and names its person: the signature by the issuer's
 * published keys (RS256 only), `iss`, `aud` (the console's client), `exp`, and a sign-in (`auth_time`) at most 12
 * hours old; then `sub`, `email` and the console roles of its `cognito:groups`. Works alike for Cognito and the
 * local provider of `npm start`.
 *
 * @throws ConsoleUnauthenticatedError for any token that fails a check; ConsoleKeysUnavailableError when the
 * provider's keys cannot be read.
 * @example
 * await verifyIdToken(token, { issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc', audience: clientId })
 * // { sub: '…', email: 'support@example.com', roles: ['support'] }
 */
export const verifyIdToken = async (token: string, check: IdTokenCheck): Promise<ConsolePerson> => {
  const now = check.now ?? new Date();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, check.keys ?? (await publishedKeys(check.issuer)), {
      issuer: check.issuer,
      audience: check.audience,
      algorithms: ID_TOKEN_ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
      requiredClaims: ['sub', 'exp', 'iat', 'auth_time'],
    }));
  } catch (error) {
    if (error instanceof ConsoleKeysUnavailableError) throw error;
    if (keysUnreachable(error))
      throw new ConsoleKeysUnavailableError("the sign-in provider's keys could not be read", {
        cause: error,
      });
    throw new ConsoleUnauthenticatedError(refusalOf(error as errors.JOSEError), { cause: error });
  }
  // Cognito marks its tokens; an access token (token_use "access") never reaches here (no `aud`), but be plain.
  if (payload.token_use !== undefined && payload.token_use !== 'id')
    throw new ConsoleUnauthenticatedError('the bearer token is not an ID token');
  const authTime = payload.auth_time;
  if (
    typeof authTime !== 'number' ||
    now.getTime() / 1000 - authTime > MAX_SIGN_IN_AGE_SECONDS + CLOCK_TOLERANCE_SECONDS
  )
    throw new ConsoleUnauthenticatedError('the sign-in is more than 12 hours old: sign in again');
  if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload.email !== 'string')
    throw new ConsoleUnauthenticatedError('the bearer token names no person (sub and email)');
  return { sub: payload.sub, email: payload.email, roles: rolesOf(payload) };
};
