import { tracedFetch } from '../../observability/tracing.ts';
import { describeFetchError } from '../fetchError.ts';
import { storeCookies } from './cookies.ts';
import type { CsrfResult } from './types.ts';

/**
 * Fetches a CSRF token and the session cookies it belongs to: `GET` on the service root with
 * `X-CSRF-Token: Fetch`. Never throws; a failure says why, without personal data.
 *
 * @example
 * const result = await fetchCsrfSession(serviceRoot, basicAuthorization('u', 'p'), 10_000);
 * if (result.ok) console.log(result.session.token);
 */
export async function fetchCsrfSession(
  serviceRoot: URL,
  authorization: string,
  timeoutMs: number,
): Promise<CsrfResult> {
  try {
    const response = await tracedFetch('SAP CSRF token', serviceRoot, {
      method: 'GET',
      headers: { Authorization: authorization, 'X-CSRF-Token': 'Fetch', Accept: 'application/json' },
      // A redirect here is a login page or a misconfigured URL, never the service document.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The service document itself is not needed; reading it frees the connection for reuse.
    await response.arrayBuffer().catch(() => undefined);
    if (!response.ok) return { ok: false, error: `CSRF token fetch failed: HTTP ${response.status}` };
    const token = response.headers.get('x-csrf-token');
    if (!token || token.toLowerCase() === 'required') {
      return { ok: false, error: 'CSRF token fetch failed: no token in the answer' };
    }
    return { ok: true, session: { token, cookies: storeCookies(response.headers, new Map()) } };
  } catch (error) {
    return { ok: false, error: `CSRF token fetch failed: ${describeFetchError(error, timeoutMs).text}` };
  }
}
