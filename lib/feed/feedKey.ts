/*
 * The keys of a feed entry: its item's `pk` (one per event, so a re-publish writes the same item) and its place in the
 * `feed` index (`feedKey`: when it was published, then the event's id, so entries sort by publishing time and
 * entries of the same millisecond keep a fixed order).
 */

/** The prefix of every feed entry's `pk`: never a record id (those are 32 hex characters). */
export const FEED_PK_PREFIX = 'feed#';

/** The `pk` of the feed entry of an event. @example feedPkOf('3f0c…:2026-11-22T08:03:12.345Z') // 'feed#3f0c…:2026-11-22T08:03:12.345Z' */
export const feedPkOf = (eventId: string): string => `${FEED_PK_PREFIX}${eventId}`;

/**
 * The `feedKey` of an entry published at `publishedAt`.
 *
 * @example
 * feedKeyOf(new Date('2026-11-22T08:03:13.001Z'), '3f0c…:2026-11-22T08:03:12.345Z') // '2026-11-22T08:03:13.001Z#3f0c…:…'
 */
export const feedKeyOf = (publishedAt: Date, eventId: string): string =>
  `${publishedAt.toISOString()}#${eventId}`;

const FEED_KEY = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)#([0-9a-f]{32}:[0-9TZ:.-]{24})$/;

/**
 * A `feedKey` taken apart: when its entry was published and the event's id; undefined for anything else.
 *
 * @example
 * parseFeedKey('2026-11-22T08:03:13.001Z#3f0c…:2026-11-22T08:03:12.345Z') // { publishedAt: Date, eventId: '3f0c…:…' }
 */
export const parseFeedKey = (key: string): { publishedAt: Date; eventId: string } | undefined => {
  const match = FEED_KEY.exec(key);
  if (!match) return undefined;
  const publishedAt = new Date(match[1]);
  if (Number.isNaN(publishedAt.getTime()) || publishedAt.toISOString() !== match[1]) return undefined;
  return { publishedAt, eventId: match[2] };
};
