import { requestAccessToken } from './token.ts';
import type { AccessToken, TokenResult } from './types.ts';

/** The access token one adapter shares between its single upserts and its Collections calls. */
export interface TokenCache {
  /** The cached token, requested once when there is none (a failure is not kept). */
  current(): Promise<TokenResult>;
  /** A new token after `refused` was refused, unless a concurrent delivery already renewed it. */
  renew(refused: AccessToken): Promise<TokenResult>;
}

/**
 * Creates the per-process token cache: one token request at a time, shared by concurrent deliveries (a Lambda
 * batch runs them in parallel), reused until Salesforce refuses it.
 *
 * @example
 * const tokens = createTokenCache('https://example.my.salesforce.com', 'id', 'secret', 10_000);
 * const first = await tokens.current();
 * if (first.ok) await tokens.renew(first.token); // after 401 INVALID_SESSION_ID
 */
export function createTokenCache(
  baseUrl: string,
  clientId: string,
  clientSecret: string,
  timeoutMs: number,
): TokenCache {
  let cached: Promise<TokenResult> | undefined;

  const current = (): Promise<TokenResult> => {
    if (!cached) {
      const pending = requestAccessToken(baseUrl, clientId, clientSecret, timeoutMs);
      cached = pending;
      void pending.then((result) => {
        if (!result.ok && cached === pending) cached = undefined;
      });
    }
    return cached;
  };

  const renew = async (refused: AccessToken): Promise<TokenResult> => {
    const seen = cached;
    const latest = seen ? await seen : undefined;
    // Another delivery may already have renewed it while this one waited: use that token.
    if (cached !== seen) return current();
    if (latest?.ok && latest.token !== refused) return latest;
    cached = undefined;
    return current();
  };

  return { current, renew };
}
