/** The sparse global secondary index of the event feed: partition key `feedClient`, sort key `feedKey`. */
export const FEED_INDEX = 'feed';

/** How far back the feed reaches (docs/behaviour.md#webhooks-and-the-event-feed): entries older than this are not served, and expire. */
export const FEED_WINDOW_DAYS = 30;

/** The feed's window in milliseconds. */
export const FEED_WINDOW_MS = FEED_WINDOW_DAYS * 24 * 60 * 60 * 1000;

/**
 * The feed serves only entries published at least this long ago. Publishers date an entry before they write it, so
 * an entry may land slightly after a later-dated one: a reader that had already passed the later one would never see
 * it. Each write that took longer than {@link FEED_WRITE_MAX_MS} is redone with a fresh date (lib/feed/feedEntries.ts),
 * and a write only ever moves an entry's key forward, so an attempt of the slow write that lands later still cannot
 * put the earlier key back: an entry's last key landed within that of its date. The rest of the delay covers clocks
 * that disagree between hosts.
 */
export const FEED_SETTLE_MS = 5_000;

/** The longest a feed write may take and keep its date (see {@link FEED_SETTLE_MS}). */
export const FEED_WRITE_MAX_MS = 1_000;

/** `limit`'s bounds and default (docs/behaviour.md#webhooks-and-the-event-feed). */
export const FEED_LIMIT_MIN = 1;
export const FEED_LIMIT_MAX = 100;
export const FEED_LIMIT_DEFAULT = 50;
