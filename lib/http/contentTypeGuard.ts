import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestRefusedError } from './errors.ts';

export interface ContentTypeGuardOptions {
  /** Media types accepted, lower case, without parameters. */
  allowed: string[];
  /** Values of a `charset` parameter accepted, lower case; a Content-Type without one is fine. */
  charsets: string[];
  /** Values of `Content-Encoding` accepted, lower case; a request without the header is fine. */
  encodings: string[];
}

const defaults: ContentTypeGuardOptions = {
  allowed: ['application/json'],
  // The service reads bodies as UTF-8 only; `utf8` is the common misspelling of the registered name.
  charsets: ['utf-8', 'utf8'],
  // Compressed bodies are refused: a small gzip body can inflate past every size limit (a zip bomb).
  encodings: ['identity'],
};

/** The media type of a Content-Type header, lower case, without parameters such as charset. */
export const mediaType = (header: string | undefined): string =>
  (header ?? '').split(';')[0].trim().toLowerCase();

/** The `charset` parameters of a Content-Type header, lower case, quotes removed (normally none or one). */
export const charsetsOf = (header: string | undefined): string[] =>
  (header ?? '')
    .split(';')
    .slice(1)
    .map((parameter) => parameter.split('='))
    .filter(([name]) => name.trim().toLowerCase() === 'charset')
    .map(([, value = '']) =>
      value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );

/**
 * Refuses with 415 what the service cannot read as it is. Only what middy's parsers lack: @middy/http-json-body-parser
 * takes any `+json` type (`application/vnd.api+json`), which the API refuses, knows no charset or encoding, and
 * cannot allow JSON or a form; this guard says which type, charset or encoding is wanted, in the API's words:
 * - a Content-Type that is not one of `allowed`: `Content-Type must be application/json`;
 * - a `charset` other than UTF-8 (`application/json; charset=latin1`): `Content-Type charset must be utf-8`;
 * - a `Content-Encoding` other than identity (gzip, br, deflate, …): `Content-Encoding must be identity: …`.
 *
 * Expects lower-case header names (http-header-normalizer runs first).
 *
 * @example
 * middy(handler).use(contentTypeGuard({ allowed: ['application/json', 'application/x-www-form-urlencoded'] }))
 */
export const contentTypeGuard = (
  opts: Partial<ContentTypeGuardOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent> => {
  const { allowed, charsets, encodings } = { ...defaults, ...opts };
  return {
    before: ({ event }) => {
      const contentType = event.headers?.['content-type'];
      if (!allowed.includes(mediaType(contentType))) {
        throw new RequestRefusedError(415, `Content-Type must be ${allowed.join(' or ')}`);
      }
      if (charsetsOf(contentType).some((charset) => !charsets.includes(charset))) {
        throw new RequestRefusedError(415, `Content-Type charset must be ${charsets[0]}`);
      }
      const encoding = event.headers?.['content-encoding']?.trim().toLowerCase();
      if (encoding && !encodings.includes(encoding)) {
        throw new RequestRefusedError(
          415,
          `Content-Encoding must be ${encodings.join(' or ')}: compressed bodies are not accepted`,
        );
      }
    },
  };
};
