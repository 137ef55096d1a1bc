import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import type { Item } from '../store/table.ts';
import { FEED_INDEX, FEED_SETTLE_MS, FEED_WINDOW_MS } from './constants.ts';
import type { FeedEvent } from './feedEntries.ts';
import { feedEventOf } from './feedEventOf.ts';

/** One page of a client's feed. */
export interface FeedPage {
  events: FeedEvent[];
  /** The `feedKey` of the last entry given, when more entries follow; undefined on the last page. */
  lastKey?: string;
}

/** ISO time `ms` milliseconds before `now`, as a `feedKey` bound (an ISO time sorts before any key of it). */
const isoBefore = (now: Date, ms: number) => new Date(now.getTime() - ms).toISOString();

/**
 * A page of a client's feed, oldest first: one Query of the `feed` index (partition: the client; no scan), of
 * entries after `afterKey` (else from the window's start, 30 days back) and published at least FEED_SETTLE_MS ago
 * (lib/feed/constants.ts says why). Asks for two more than `limit`: the cursor's own entry, read again because the
 * bound is inclusive, and one to tell whether another page follows.
 *
 * @example
 * const { events, lastKey } = await feedPage('example-dealer', { limit: 50, now: new Date() });
 */
export const feedPage = async (
  client: string,
  options: { afterKey?: string; limit: number; now: Date },
): Promise<FeedPage> => {
  const windowStart = isoBefore(options.now, FEED_WINDOW_MS);
  const from =
    options.afterKey !== undefined && options.afterKey > windowStart ? options.afterKey : windowStart;
  const out = await dynamoClient().send(
    new QueryCommand({
      TableName: recordsTable(),
      IndexName: FEED_INDEX,
      KeyConditionExpression: 'feedClient = :client AND feedKey BETWEEN :from AND :until',
      ExpressionAttributeValues: {
        ':client': { S: client },
        ':from': { S: from },
        // Keys of the millisecond FEED_SETTLE_MS ago included: they sort after its bare ISO time, before the next.
        ':until': { S: isoBefore(options.now, FEED_SETTLE_MS - 1) },
      },
      ProjectionExpression: 'feedKey, feedEvent',
      Limit: options.limit + 2,
    }),
  );
  const items = ((out.Items ?? []) as Item[]).filter((item) => item.feedKey?.S !== options.afterKey);
  const page = items.slice(0, options.limit);
  // More follow when this read found more than a page, or DynamoDB stopped it early (its 1 MB page).
  const more = items.length > options.limit || (out.LastEvaluatedKey !== undefined && page.length > 0);
  return {
    events: page.map(feedEventOf),
    lastKey: more ? page.at(-1)?.feedKey?.S : undefined,
  };
};
