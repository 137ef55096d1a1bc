import { isObject, parseJsonOrUndefined } from '../../json.ts';
import { tracedFetch } from '../../observability/tracing.ts';
import { describeFetchError } from '../fetchError.ts';
import type { TokenResult } from './types.ts';

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/**
 * Requests an access token with the OAuth 2.0 client credentials flow. Never throws.
 * Every failure is reported for a later retry, even 400 `invalid_client`: during a secret rotation the
 * old secret stops working before the new one is deployed, and the records must wait, not be rejected.
 *
 * @example
 * const result = await requestAccessToken('https://example.my.salesforce.com', 'id', 'secret', 10_000);
 * if (result.ok) console.log(result.token.instanceUrl);
 */
export async function requestAccessToken(
  baseUrl: string,
  clientId: string,
  clientSecret: string,
  timeoutMs: number,
): Promise<TokenResult> {
  try {
    const response = await tracedFetch('Salesforce token', `${trimSlash(baseUrl)}/services/oauth2/token`, {
      method: 'POST',
      headers: { Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const body = parseJsonOrUndefined(text);
    if (response.status !== 200) {
      // `error` is an OAuth code such as invalid_client; the description is left out (it may be long).
      const code = isObject(body) && typeof body.error === 'string' ? ` ${body.error.slice(0, 100)}` : '';
      return { ok: false, error: `token request failed: HTTP ${response.status}${code}` };
    }
    if (!isObject(body) || typeof body.access_token !== 'string' || !body.access_token) {
      return { ok: false, error: 'token request failed: no access_token in the answer' };
    }
    // Salesforce always names the instance; should it not, the My Domain URL serves the API as well.
    const instanceUrl =
      typeof body.instance_url === 'string' && URL.canParse(body.instance_url) ? body.instance_url : baseUrl;
    return { ok: true, token: { accessToken: body.access_token, instanceUrl: trimSlash(instanceUrl) } };
  } catch (error) {
    return { ok: false, error: `token request failed: ${describeFetchError(error, timeoutMs).text}` };
  }
}
