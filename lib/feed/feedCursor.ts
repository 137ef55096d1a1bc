import { RequestRefusedError } from '../http/errors.ts';
import { FEED_WINDOW_DAYS, FEED_WINDOW_MS } from './constants.ts';
import { parseFeedKey } from './feedKey.ts';

/** A cursor is short: anything longer is not one of ours (and is not parsed). */
const MAX_CURSOR_LENGTH = 300;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The opaque cursor of a feed page: base64url of `{"c": <client>, "k": <feedKey of the last entry given>}`. The
 * client is in it so that a cursor shown to another client is refused rather than read (the feed is partitioned by
 * client, so even a forged cursor could not reach another client's entries).
 *
 * @example
 * cursorOf('example-dealer', '2026-11-22T08:03:13.001Z#3f0c…:2026-11-22T08:03:12.345Z') // 'eyJjIjoiZXhhbXBsZS1kZWFsZXIi…'
 */
export const cursorOf = (client: string, feedKey: string): string =>
  Buffer.from(JSON.stringify({ c: client, k: feedKey })).toString('base64url');

const malformed = () =>
  new RequestRefusedError(400, 'after must be a cursor this feed gave (the "next" of an earlier page)');

/**
 * The `feedKey` a cursor continues after, for this client at `now`. 400 naming the parameter and the rule for a
 * cursor that is malformed, another client's, or older than the feed's window.
 *
 * @example
 * feedKeyAfter(answer.next, 'example-dealer', new Date()) // '2026-11-22T08:03:13.001Z#3f0c…:…'
 */
export const feedKeyAfter = (cursor: string, client: string, now: Date): string => {
  if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) throw malformed();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const { c, k } = (decoded ?? {}) as { c?: unknown; k?: unknown };
  if (typeof c !== 'string' || typeof k !== 'string') throw malformed();
  const key = parseFeedKey(k);
  if (!key) throw malformed();
  if (c !== client) throw new RequestRefusedError(400, 'after must be a cursor given to this client');
  if (key.publishedAt.getTime() < now.getTime() - FEED_WINDOW_MS)
    throw new RequestRefusedError(
      400,
      `after is an expired cursor: the feed reaches ${FEED_WINDOW_DAYS} days back; start again without after`,
    );
  if (key.publishedAt.getTime() > now.getTime()) throw malformed();
  return k;
};
