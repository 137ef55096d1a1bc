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
