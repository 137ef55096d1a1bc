/** One HTTP response carried inside a `$batch` answer part (`Content-Type: application/http`). */
export interface EmbeddedResponse {
  status: number;
  headers: Headers;
  text: string;
}

const STATUS_LINE = /^HTTP\/\d(?:\.\d)? (\d{3})(?: .*)?$/;

/**
 * Reads an embedded HTTP response: status line, header lines, an empty line, the body. Returns undefined when
 * the text is not one (no status line, a header line without a colon): the caller must not guess its outcome.
 *
 * @example
 * parseEmbeddedResponse(new TextEncoder().encode('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n\r\n{}'));
 * // { status: 201, headers: Headers { 'content-type': 'application/json' }, text: '{}' }
 */
export function parseEmbeddedResponse(bytes: Uint8Array): EmbeddedResponse | undefined {
  const message = new TextDecoder().decode(bytes);
  // CRLF as the protocol says; a bare LF is read too (some gateways and proxies write it).
  const head = /\r?\n\r?\n/.exec(message);
  const headText = head ? message.slice(0, head.index) : message;
  const text = head ? message.slice(head.index + head[0].length) : '';
  const [statusLine, ...headerLines] = headText.split(/\r?\n/);
  const status = STATUS_LINE.exec(statusLine.trim());
  if (!status) return undefined;
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      return undefined; // a header name or value no HTTP message may carry
    }
  }
  return { status: Number(status[1]), headers, text };
}
