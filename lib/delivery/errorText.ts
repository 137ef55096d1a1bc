import { MAX_ERROR_TEXT_LENGTH } from './constants.ts';

const REDACTED = '[redacted]';

/** Anything shaped like an email address, whoever it belongs to. */
const EMAIL_PATTERN = /[^\s@<>()"',;:[\]]+@[^\s@<>()"',;:[\]]+\.[^\s@<>()"',;:[\]]+/g;

/** Shorter values ("Li", "2") would blank out unrelated words of the message. */
const MIN_REDACTED_LENGTH = 3;

const escapeRegExp = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Makes a downstream message safe to store and log: email addresses and the record's personal values
 * are blanked out, whitespace is collapsed and the text is cut to about 500 characters.
 *
 * @example
 * safeErrorText('E-mail ann@example.com of Ann Lee is invalid', ['Ann Lee']);
 * // 'E-mail [redacted] of [redacted] is invalid'
 */
export function safeErrorText(text: string, personalValues: readonly string[]): string {
  let safe = text.replace(EMAIL_PATTERN, REDACTED);
  // Longest first: a name inside an email-like value must not break that value up before it is matched.
  const values = personalValues.map((value) => value.trim()).sort((a, b) => b.length - a.length);
  for (const trimmed of values) {
    if (trimmed.length < MIN_REDACTED_LENGTH) continue;
    // Whole words only, so a short name does not eat into longer words of the message.
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(trimmed)}(?![\\p{L}\\p{N}])`, 'giu');
    safe = safe.replace(pattern, REDACTED);
  }
  safe = safe.replace(/\s+/g, ' ').trim();
  return safe.length > MAX_ERROR_TEXT_LENGTH ? `${safe.slice(0, MAX_ERROR_TEXT_LENGTH - 1)}…` : safe;
}

/**
 * Describes why `fetch` threw, without the request (which carries personal data).
 *
 * @example
 * describeFetchError(new DOMException('late', 'TimeoutError'), 10_000);
 * // { timedOut: true, text: 'timed out after 10000 ms' }
 */
export function describeFetchError(error: unknown, timeoutMs: number): { timedOut: boolean; text: string } {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return { timedOut: true, text: `timed out after ${timeoutMs} ms` };
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  // System codes (ECONNREFUSED, ECONNRESET, ENOTFOUND) say it all; undici's own codes (UND_ERR_SOCKET)
  // say less than their message ("other side closed").
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const detail =
    (code && /^E[A-Z]+$/.test(code) && code) ||
    (typeof cause?.message === 'string' && cause.message) ||
    code ||
    (error instanceof Error ? error.message : String(error));
  return { timedOut: false, text: `network error: ${detail}` };
}
