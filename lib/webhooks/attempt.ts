/** One try of a webhook: a POST with a time limit, and what its answer means for the event. */

import { tracedFetch } from '../observability/tracing.ts';
import type { SignatureHeaders } from './signing.ts';

/**
 * What a try came to: `delivered` (2xx), `gone` (410: the client turned its webhook off; it is disabled until an
 * operator enables it), `retry` (any other answer, a timeout or a connection failure; `timedOut` when the try ran
 * into its time limit).
 */
export type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'gone'; status: 410 }
  | { kind: 'retry'; status?: number; error: string; timedOut?: true };

/** One try's time limit when none is given (a receiver should answer at once and work afterwards). */
export const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * What an answer's status means.
 *
 * @example
 * outcomeOfStatus(410) // { kind: 'gone', status: 410 }
 */
export const outcomeOfStatus = (status: number): AttemptOutcome => {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status };
  return { kind: 'retry', status, error: `HTTP ${status}` };
};

/**
 * Posts a signed body once. Never throws: a timeout or a connection failure is a `retry`. Redirects are not
 * followed (a webhook URL is configured, not discovered).
 *
 * @example
 * const outcome = await attemptWebhook({ url, body, headers: signWebhook({ id, body, secrets, at: new Date() }) });
 */
export const attemptWebhook = async (input: {
  url: string;
  body: string;
  headers: SignatureHeaders;
  timeoutMs?: number;
  userAgent?: string;
  signal?: AbortSignal;
}): Promise<AttemptOutcome> => {
  const timeout = AbortSignal.timeout(input.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
  try {
    const response = await tracedFetch('webhook POST', input.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': input.userAgent ?? 'dealer-gateway-webhooks',
        ...input.headers,
      },
      body: input.body,
      redirect: 'manual',
      signal: input.signal ? AbortSignal.any([input.signal, timeout]) : timeout,
    });
    await response.body?.cancel().catch(() => {});
    return outcomeOfStatus(response.status);
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    const code = (error as { cause?: { code?: string } }).cause?.code;
    return {
      kind: 'retry',
      error: code ? `${name} (${code})` : name,
      ...(timeout.aborted ? { timedOut: true as const } : {}),
    };
  }
};
