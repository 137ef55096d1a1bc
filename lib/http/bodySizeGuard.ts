import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RequestRefused } from './errors.ts';

export interface BodySizeGuardOptions {
  maxBytes: number;
}

const defaults: BodySizeGuardOptions = { maxBytes: 1024 * 1024 };

const describe = (bytes: number) =>
  bytes % 1024 === 0 && bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;

/**
 * Refuses with 413 a body larger than `maxBytes` (counted in bytes as received, before any parsing).
 *
 * @example
 * middy(handler).use(bodySizeGuard({ maxBytes: 64 * 1024 }))
 */
export const bodySizeGuard = (
  opts: Partial<BodySizeGuardOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent> => {
  const { maxBytes } = { ...defaults, ...opts };
  return {
    before: ({ event }) => {
      const body = event.body ?? '';
      const bytes = event.isBase64Encoded
        ? Buffer.byteLength(body, 'base64')
        : Buffer.byteLength(body, 'utf8');
      if (bytes > maxBytes) throw new RequestRefused(413, `body must be at most ${describe(maxBytes)}`);
    },
  };
};
