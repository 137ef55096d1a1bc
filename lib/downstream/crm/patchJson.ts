import { tracedFetch } from '../../observability/tracing.ts';
import { describeFetchError } from '../fetchError.ts';
import { type ApiUsage, parseApiUsage } from './apiUsage.ts';
import type { AccessToken, PatchAnswer } from './types.ts';

/**
 * One authenticated JSON `PATCH` to the org (a single upsert or a Collections upsert): the answer's status and body,
 * or why there was none, and the org's API usage when the answer reported it (`Sforce-Limit-Info`).
 *
 * @example
 * const { answer, usage } = await patchJson(url, token, JSON.stringify(body), 10_000);
 */
export const patchJson = async (
  url: string,
  token: AccessToken,
  body: string,
  timeoutMs: number,
): Promise<{ answer: PatchAnswer; usage?: ApiUsage }> => {
  try {
    const response = await tracedFetch('Salesforce PATCH', url, {
      method: 'PATCH',
      headers: {
        Authorization: `Bearer ${token.accessToken}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
      },
      body,
      // A redirected PATCH would be re-sent blindly; classify the 3xx instead.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const usage = parseApiUsage(response.headers.get('sforce-limit-info'));
    // The status is known: a body cut off by the timeout or the network only loses the details (and then does
    // not parse as a whole).
    const text = await response.text().catch(() => '');
    return { answer: { kind: 'answered', status: response.status, text }, ...(usage ? { usage } : {}) };
  } catch (error) {
    const { timedOut, text } = describeFetchError(error, timeoutMs);
    return { answer: timedOut ? { kind: 'timedOut', error: text } : { kind: 'networkError', error: text } };
  }
};
