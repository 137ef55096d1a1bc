/** What fetching a credential gives: the credential, or why there is none (never cached). */
export type CredentialResult = { ok: boolean };

/** A credential one downstream adapter shares between its single calls and its batched calls. */
export interface CredentialCache<R extends CredentialResult, C> {
  /** The cached credential, fetched once when there is none (a failure is not kept). */
  current(): Promise<R>;
  /** A new credential after `refused` was refused, unless a concurrent delivery already renewed it. */
  renew(refused: C): Promise<R>;
}

/**
 * Creates a per-process credential cache: one fetch at a time, shared by concurrent deliveries (a Lambda batch runs
 * them in parallel), reused until the downstream refuses it. The ERP's CSRF sessions and the CRM's access tokens
 * are both kept in one.
 *
 * @param fetchCredential asks the downstream for a new credential.
 * @param credentialOf the credential a successful result carries (compared with the refused one on renewal).
 * @example
 * const tokens = createCredentialCache(() => requestAccessToken(url, id, secret, 10_000), (r) => (r.ok ? r.token : undefined));
 * const first = await tokens.current();
 * if (first.ok) await tokens.renew(first.token); // after 401 INVALID_SESSION_ID
 */
export function createCredentialCache<R extends CredentialResult, C>(
  fetchCredential: () => Promise<R>,
  credentialOf: (result: R) => C | undefined,
): CredentialCache<R, C> {
  let cached: Promise<R> | undefined;

  const current = (): Promise<R> => {
    if (!cached) {
      const pending = fetchCredential();
      cached = pending;
      void pending.then((result) => {
        if (!result.ok && cached === pending) cached = undefined;
      });
    }
    return cached;
  };

  const renew = async (refused: C): Promise<R> => {
    const seen = cached;
    const latest = seen ? await seen : undefined;
    // Another delivery may already have renewed it while this one waited: use that credential.
    if (cached !== seen) return current();
    if (latest?.ok && credentialOf(latest) !== refused) return latest;
    cached = undefined;
    return current();
  };

  return { current, renew };
}
