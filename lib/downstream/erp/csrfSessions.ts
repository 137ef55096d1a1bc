import { fetchCsrfSession } from './csrf.ts';
import type { CsrfResult, CsrfSession } from './types.ts';

/** The CSRF token and cookies one adapter shares between its single POSTs and its `$batch` calls. */
export interface CsrfSessions {
  /** The cached session, fetched once when there is none (a failure is not kept). */
  current(): Promise<CsrfResult>;
  /** A new session after `refused` was refused, unless a concurrent delivery already renewed it. */
  renew(refused: CsrfSession): Promise<CsrfResult>;
}

/**
 * Creates the per-process CSRF session cache: one token fetch at a time, shared by concurrent deliveries
 * (a Lambda batch runs them in parallel), reused until the ERP refuses it.
 *
 * @example
 * const sessions = createCsrfSessions(serviceRoot, basicAuthorization('u', 'p'), 10_000);
 * const first = await sessions.current();
 * if (first.ok) await sessions.renew(first.session); // after a 403 `X-CSRF-Token: Required`
 */
export function createCsrfSessions(serviceRoot: URL, authorization: string, timeoutMs: number): CsrfSessions {
  let cached: Promise<CsrfResult> | undefined;

  const current = (): Promise<CsrfResult> => {
    if (!cached) {
      const pending = fetchCsrfSession(serviceRoot, authorization, timeoutMs);
      cached = pending;
      void pending.then((result) => {
        if (!result.ok && cached === pending) cached = undefined;
      });
    }
    return cached;
  };

  const renew = async (refused: CsrfSession): Promise<CsrfResult> => {
    const seen = cached;
    const latest = seen ? await seen : undefined;
    // Another delivery may already have renewed it while this one waited: use that token.
    if (cached !== seen) return current();
    if (latest?.ok && latest.session !== refused) return latest;
    cached = undefined;
    return current();
  };

  return { current, renew };
}
