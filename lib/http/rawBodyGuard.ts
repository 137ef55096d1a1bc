import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { bodyTextOf, checkFormText } from './bodyText.ts';
import { mediaType } from './contentTypeGuard.ts';
import { RequestRefusedError } from './errors.ts';
import { checkJsonStructure } from './jsonStructure.ts';

export interface RawBodyGuardOptions {
  /** Largest body, in bytes as received: 413 beyond. */
  maxBytes: number;
  /** Most levels of JSON objects and arrays inside one another: 400 beyond. */
  maxDepth: number;
  /** Keys (JSON) and field names (forms) refused wherever they appear: 400. */
  forbiddenKeys: string[];
}

const defaults: RawBodyGuardOptions = {
  maxBytes: 1024 * 1024,
  // A sales registration body is 2 levels deep, a case 1; 32 leaves room and stops recursion long before the stack.
  maxDepth: 32,
  forbiddenKeys: ['__proto__', 'constructor', 'prototype'],
};

const describe = (bytes: number) =>
  bytes % 1024 === 0 && bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;

/**
 * Judges the raw body before any parser sees it, so that what parsers would accept silently or choke on is
 * refused with a reason (in the operation's shape, by contractErrors), never answered with 500:
 *
 * 1. larger than `maxBytes` (counted in bytes as received): **413** `body must be at most 1 MiB`;
 * 2. not UTF-8 (a base64 body whose bytes are not UTF-8, lone surrogates): **400** `body is not valid UTF-8`;
 * 3. JSON (`application/json`): a key given twice in one object (**400** `[0].email is given more than once`),
 *    nesting deeper than `maxDepth` (**400**), a forbidden key such as `__proto__` anywhere (**400**), a lone
 *    surrogate escape (**400** not valid UTF-8), all found by one linear scan (see checkJsonStructure);
 * 4. a form (`application/x-www-form-urlencoded`): percent-escapes that do not decode to UTF-8 (**400**), a
 *    forbidden field name (**400**).
 *
 * Goes after contentTypeGuard (the media type is known to be allowed, charset and encoding checked) and before
 * the body parsers. The body itself is left as it is.
 *
 * @example
 * middy(handler).use(contentTypeGuard()).use(rawBodyGuard({ maxBytes: 64 * 1024 })).use(httpJsonBodyParser())
 */
export const rawBodyGuard = (
  opts: Partial<RawBodyGuardOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent> => {
  const { maxBytes, maxDepth, forbiddenKeys } = { ...defaults, ...opts };
  const forbidden = new Set(forbiddenKeys);
  return {
    before: ({ event }) => {
      const body = event.body ?? '';
      const base64 = event.isBase64Encoded === true;
      const bytes = base64 ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body, 'utf8');
      if (bytes > maxBytes) throw new RequestRefusedError(413, `body must be at most ${describe(maxBytes)}`);
      if (body === '') return;
      const text = bodyTextOf(body, base64);
      if (text === undefined) throw new RequestRefusedError(400, 'body is not valid UTF-8');
      const type = mediaType(event.headers?.['content-type']);
      const reason =
        type === 'application/json'
          ? checkJsonStructure(text, { maxDepth, forbiddenKeys: forbidden })
          : type === 'application/x-www-form-urlencoded'
            ? checkFormText(text, { forbiddenKeys: forbidden })
            : undefined;
      if (reason) throw new RequestRefusedError(400, reason);
    },
  };
};
