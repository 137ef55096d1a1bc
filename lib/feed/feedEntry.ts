import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import type { FeedEvent } from './feedEntries.ts';
import { feedEventOf } from './feedEventOf.ts';
import { feedPkOf } from './feedKey.ts';

/**
 * One event as its feed entry keeps it (30 days after publishing), by its id: the webhook body the client was sent
 * (the feed and the webhooks are made by one function, webhookEventOf). Undefined when the entry has expired.
 *
 * @example
 * const event = await feedEventById('3f0c…:2026-11-22T08:03:12.345Z'); // { id, type: 'record.delivered', … }
 */
export const feedEventById = async (eventId: string): Promise<FeedEvent | undefined> => {
  const out = await dynamoClient().send(
    new GetItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: feedPkOf(eventId) } },
      ConsistentRead: true,
      ProjectionExpression: 'feedEvent',
    }),
  );
  return out.Item?.feedEvent ? feedEventOf(out.Item) : undefined;
};
