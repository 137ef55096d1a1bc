/**
 * Reads the `name=value` pairs of a response's `Set-Cookie` headers into `jar` (attributes such as
 * Path or HttpOnly do not matter for a client that talks to one host). Returns the jar.
 *
 * @example
 * const jar = storeCookies(response.headers, new Map());
 * cookieHeader(jar); // 'SAP_SESSIONID_ABC_100=xyz; sap-usercontext=sap-client=100'
 */
export function storeCookies(headers: Headers, jar: Map<string, string>): Map<string, string> {
  for (const line of headers.getSetCookie()) {
    const pair = line.split(';', 1)[0];
    const separator = pair.indexOf('=');
    if (separator <= 0) continue;
    jar.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
  }
  return jar;
}

/**
 * Formats a jar as a `Cookie` request header value.
 *
 * @example
 * cookieHeader(new Map([['a', '1'], ['b', '2']])); // 'a=1; b=2'
 */
export function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}
