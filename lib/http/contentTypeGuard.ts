import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestRefused } from './errors.ts';

export interface ContentTypeGuardOptions {
  /** Media types accepted, lower case, without parameters. */
  allowed: string[];
}

const defaults: ContentTypeGuardOptions = { allowed: ['application/json'] };

/** The media type of a Content-Type header, lower case, without parameters such as charset. */
export const mediaType = (header: string | undefined): string =>
  (header ?? '').split(';')[0].trim().toLowerCase();

/**
 * Refuses with 415 a request whose Content-Type is not one of `allowed` (a charset parameter is fine).
 * Expects lower-case header names (http-header-normalizer runs first).
 *
 * @example
 * middy(handler).use(contentTypeGuard({ allowed: ['application/json', 'application/x-www-form-urlencoded'] }))
 */
export const contentTypeGuard = (
  opts: Partial<ContentTypeGuardOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent> => {
  const { allowed } = { ...defaults, ...opts };
  return {
    before: ({ event }) => {
      if (!allowed.includes(mediaType(event.headers?.['content-type']))) {
        throw new RequestRefused(415, `Content-Type must be ${allowed.join(' or ')}`);
      }
    },
  };
};
