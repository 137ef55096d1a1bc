import { isUtf8 } from 'node:buffer';
import { unescape as percentDecode } from 'node:querystring';

/**
 * The text of a body as API Gateway hands it over, if UTF-8 can carry it: a base64 body whose bytes are valid
 * UTF-8, or a string without lone surrogates; else undefined. Parsers would turn the rest into U+FFFD silently.
 *
 * @example
 * bodyTextOf(Buffer.from([0xff]).toString('base64'), true) // undefined
 */
export const bodyTextOf = (body: string, isBase64Encoded: boolean): string | undefined => {
  if (!isBase64Encoded) return body.isWellFormed() ? body : undefined;
  const bytes = Buffer.from(body, 'base64');
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
};

export interface FormCheckOptions {
  /** Field names refused (prototype pollution), compared after percent-decoding. */
  forbiddenKeys: ReadonlySet<string>;
}

/**
 * Checks an `application/x-www-form-urlencoded` body before `querystring.parse` sees it: every name and value
 * must percent-decode to valid UTF-8 (`%FF` would otherwise become U+FFFD silently), and no field may bear a
 * forbidden name. Malformed escapes (`%ZZ`) stay as they are, as the parser keeps them.
 *
 * @returns the reason to refuse the body, or undefined.
 * @example
 * checkFormText('firstName=%FF', { forbiddenKeys: new Set(['__proto__']) }) // 'body is not valid UTF-8'
 */
export const checkFormText = (text: string, opts: FormCheckOptions): string | undefined => {
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!escapesAreUtf8(name) || (eq >= 0 && !escapesAreUtf8(pair.slice(eq + 1)))) {
      return 'body is not valid UTF-8';
    }
    const decodedName = percentDecode(name.replaceAll('+', ' '));
    if (opts.forbiddenKeys.has(decodedName)) return `body contains the forbidden key "${decodedName}"`;
  }
  return undefined;
};

/** Runs of percent-escapes: `%C3%A9`. A simple repetition, linear in the text. */
const escapeRun = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * True when every run of percent-escapes in a well-formed string decodes to valid UTF-8. Characters sent as they
 * are are whole code points already, so a run can neither start nor end inside one: each run must be valid
 * UTF-8 by itself.
 */
const escapesAreUtf8 = (part: string): boolean => {
  if (!part.includes('%')) return true;
  for (const [run] of part.matchAll(escapeRun)) {
    if (!isUtf8(Buffer.from(run.replaceAll('%', ''), 'hex'))) return false;
  }
  return true;
};
