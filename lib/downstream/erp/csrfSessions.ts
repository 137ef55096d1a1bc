import { type CredentialCache, createCredentialCache } from '../credentialCache.ts';
import { fetchCsrfSession } from './csrf.ts';
import type { CsrfResult, CsrfSession } from './types.ts';

/** The CSRF token and cookies one adapter shares between its single POSTs and its `$batch` calls. */
export type CsrfSessions = CredentialCache<CsrfResult, CsrfSession>;

/**
 * Creates the per-process CSRF session cache: one token fetch at a time, shared by concurrent deliveries
 * (a Lambda batch runs them in parallel), reused until the ERP refuses it.
 *
 * @example
 * const sessions = createCsrfSessions(serviceRoot, basicAuthorization('u', 'p'), 10_000);
 * const first = await sessions.current();
 * if (first.ok) await sessions.renew(first.session); // after a 403 `X-CSRF-Token: Required`
 */
export const createCsrfSessions = (
  serviceRoot: URL,
  authorization: string,
  timeoutMs: number,
): CsrfSessions =>
  createCredentialCache(
    () => fetchCsrfSession(serviceRoot, authorization, timeoutMs),
    (result) => (result.ok ? result.session : undefined),
  );
