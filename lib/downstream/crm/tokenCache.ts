import { type CredentialCache, createCredentialCache } from '../credentialCache.ts';
import { requestAccessToken } from './token.ts';
import type { AccessToken, TokenResult } from './types.ts';

/** The access token one adapter shares between its single upserts and its Collections calls. */
export type TokenCache = CredentialCache<TokenResult, AccessToken>;

/**
 * Creates the per-process token cache: one token request at a time, shared by concurrent deliveries (a Lambda
 * batch runs them in parallel), reused until Salesforce refuses it.
 *
 * @example
 * const tokens = createTokenCache('https://example.my.salesforce.com', 'id', 'secret', 10_000);
 * const first = await tokens.current();
 * if (first.ok) await tokens.renew(first.token); // after 401 INVALID_SESSION_ID
 */
export const createTokenCache = (
  baseUrl: string,
  clientId: string,
  clientSecret: string,
  timeoutMs: number,
): TokenCache =>
  createCredentialCache(
    () => requestAccessToken(baseUrl, clientId, clientSecret, timeoutMs),
    (result) => (result.ok ? result.token : undefined),
  );
