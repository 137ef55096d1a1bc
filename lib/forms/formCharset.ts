import { unescape as percentDecoded } from 'node:querystring';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { charsetsOf, mediaType } from '../http/contentTypeGuard.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { controlFields } from './controlFields.ts';

/** The encodings a form may be posted in, by their WHATWG names (ISO-8859-1 is read as windows-1252, as browsers do). */
export type FormEncoding = 'utf-8' | 'windows-1252';

const FORM = 'application/x-www-form-urlencoded';
const accepted = 'utf-8, iso-8859-1 or windows-1252';

/**
 * The encoding a charset label names, resolved as browsers resolve it (`latin1`, `ISO-8859-1`, `cp1252` all
 * name windows-1252; `utf8` names UTF-8), or undefined for any encoding other than those two.
 *
 * @example
 * formEncodingOf('ISO-8859-1') // 'windows-1252'
 * formEncodingOf('koi8-r')     // undefined
 */
export const formEncodingOf = (label: string): FormEncoding | undefined => {
  try {
    const { encoding } = new TextDecoder(label.trim());
    return encoding === 'utf-8' || encoding === 'windows-1252' ? encoding : undefined;
  } catch {
    return undefined; // RangeError: not an encoding label at all
  }
};

/** The values of the `_charset_` fields of a urlencoded body (ASCII names, so no decoding question arises). */
const charsetFieldsOf = (text: string): string[] =>
  text
    .split('&')
    .map((pair) => pair.split('='))
    .filter(([name]) => name === controlFields.charset)
    .map(([, value = '']) => percentDecoded(value.replaceAll('+', ' ')).trim());

/** A decoded character written back into a urlencoded body: escaped if the body's structure or ASCII controls need it. */
const rewritten = (c: string): string => {
  const code = c.charCodeAt(0);
  return '%&=+'.includes(c) || code < 0x20 || code === 0x7f
    ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
    : c;
};
const escapeRun = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * Re-writes a urlencoded body whose percent-escapes are bytes of `encoding` as one whose characters are
 * UTF-8: every run of escapes is decoded in `encoding` and written back as the characters themselves, only
 * `% & = +` and ASCII controls escaped again. Characters sent unescaped stay as they are. The result is never
 * longer in UTF-8 than the original (an escape is 3 bytes, the character it becomes at most 3).
 *
 * @example
 * transcodeForm('comments=10+%80+caf%E9', 'windows-1252') // 'comments=10+€+café'
 */
export const transcodeForm = (text: string, encoding: FormEncoding): string => {
  const decoder = new TextDecoder(encoding);
  return text.replace(escapeRun, (run) =>
    Array.from(decoder.decode(Buffer.from(run.replaceAll('%', ''), 'hex')), rewritten).join(''),
  );
};

export interface FormCharsetOptions {
  /** The body limit of the operation: a larger body is left as it is, for the size guard to refuse (413). */
  maxBytes: number;
}

/**
 * Reads a form posted in the encoding of its page. The encoding comes from a `charset` parameter of the
 * Content-Type or from the form's `_charset_` field (browsers fill it in); UTF-8 (the default), ISO-8859-1 and
 * windows-1252 are honoured, anything else is refused with **415**, as is a header and a field naming different
 * encodings. A non-UTF-8 form is re-written as UTF-8 (see {@link transcodeForm}) and its Content-Type says
 * `charset=utf-8` from then on, so the guards and the parser after this read it like any other form.
 *
 * Other media types pass untouched (contentTypeGuard judges them); so does a body with a Content-Encoding or
 * larger than `maxBytes` (refused after this, 415 or 413). Goes before contentTypeGuard and rawBodyGuard.
 *
 * @example
 * middy(handler).use(formCharset({ maxBytes })).use(contentTypeGuard(…)).use(rawBodyGuard({ maxBytes }))
 */
export const formCharset = (opts: FormCharsetOptions): MiddlewareObj<APIGatewayProxyEvent> => ({
  before: ({ event }) => {
    const contentType = event.headers?.['content-type'];
    if (mediaType(contentType) !== FORM) return;
    const encoding = event.headers?.['content-encoding']?.trim().toLowerCase();
    if (encoding && encoding !== 'identity') return;
    const body = event.body ?? '';
    const base64 = event.isBase64Encoded === true;
    if ((base64 ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body, 'utf8')) > opts.maxBytes)
      return;

    const ascii = base64 ? Buffer.from(body, 'base64').toString('latin1') : body;
    const labels = [...charsetsOf(contentType), ...charsetFieldsOf(ascii)];
    const encodings = new Set(
      labels.map((label) => {
        const found = formEncodingOf(label);
        if (!found) throw new RequestRefusedError(415, `charset must be ${accepted}`);
        return found;
      }),
    );
    if (encodings.size > 1) {
      throw new RequestRefusedError(
        415,
        `the charset of Content-Type and the ${controlFields.charset} field disagree`,
      );
    }
    const [chosen = 'utf-8'] = encodings;
    if (chosen === 'utf-8') return; // rawBodyGuard checks that it is UTF-8 indeed

    const text = base64 ? new TextDecoder(chosen).decode(Buffer.from(body, 'base64')) : body;
    event.body = transcodeForm(text, chosen);
    event.isBase64Encoded = false;
    event.headers['content-type'] = `${FORM}; charset=utf-8`;
  },
});
