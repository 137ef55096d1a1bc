import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import type { RecordStateChanged } from '../events/types.ts';
import { type WebhookEvent, webhookEventOf, webhookIdOf } from '../events/webhookEvent.ts';
import { recordsTable, retentionSettings } from '../settings/settings.ts';
import { conditionally } from '../store/table.ts';
import { FEED_WINDOW_MS, FEED_WRITE_MAX_MS } from './constants.ts';
import { feedKeyOf, feedPkOf } from './feedKey.ts';

/** An entry of the event feed as a client reads it: the event's id, then the event (docs/behaviour.md#webhooks-and-the-event-feed). */
export type FeedEvent = { id: string } & WebhookEvent;

/** Tries of one entry's write before the publisher gives up (the events stay in the outbox for the reconciler). */
const WRITE_ROUNDS = 3;

/**
 * Writes (or rewrites) an event's feed entry, dated `publishedAt`: one item per event (`pk` from its id), so a
 * re-publish rewrites it rather than adding one. Every write dates it afresh: a re-publish follows a publisher that
 * may have died during its write, whose entry may have landed late, behind a reader's cursor; the fresh date puts it
 * in front of every cursor again (a reader then sees it twice, with the same id, which the contract allows).
 *
 * Only ever forward: the write holds only if the entry has no key yet or an earlier one. A write that lands late (an
 * attempt the AWS client gave up on and retried, held in the network meanwhile) finds the key a later write gave
 * it and changes nothing; without the condition it would put the entry back behind a cursor that already passed
 * its later key, and that reader would never see it. A refused write counts as written: a key as late or later is
 * there, written by this publisher's own earlier attempt or by another publisher, which measures its own write.
 */
/** How long an entry stays: the feed's window, a test record's entry no longer than the test record itself. */
const keptFor = (event: RecordStateChanged): number =>
  event.test ? Math.min(FEED_WINDOW_MS, retentionSettings().testDays * 86_400_000) : FEED_WINDOW_MS;

const writeEntry = async (event: RecordStateChanged, publishedAt: Date): Promise<void> => {
  const entry: FeedEvent = { id: webhookIdOf(event), ...webhookEventOf(event) };
  const values: Record<string, AttributeValue> = {
    ':client': { S: event.client },
    ':key': { S: feedKeyOf(publishedAt, event.eventId) },
    ':event': { M: marshall(entry, { removeUndefinedValues: true }) },
    ':expires': { N: String(Math.ceil((publishedAt.getTime() + keptFor(event)) / 1000)) },
  };
  await conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: feedPkOf(event.eventId) } },
        UpdateExpression:
          'SET feedClient = :client, feedKey = :key, feedEvent = :event, expiresAt = :expires',
        ConditionExpression: 'attribute_not_exists(feedKey) OR feedKey < :key',
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * Puts events in their clients' feeds, one entry each, before they go to the bus: a webhook never tells of an
 * event the feed lacks. A write that took longer than FEED_WRITE_MAX_MS may have landed behind a reader's cursor;
 * it is written again with a fresh date, and no write moves a key back (lib/feed/constants.ts, FEED_SETTLE_MS, and
 * docs/design.md, "The event feed", say why that suffices).
 *
 * @throws when an entry could not be written in time after a few rounds, or DynamoDB failed.
 * @example
 * await putFeedEntries(events); // then PutEvents, then the outbox is emptied
 */
export const putFeedEntries = async (
  events: readonly RecordStateChanged[],
  clock: () => number = Date.now,
): Promise<void> => {
  // One after the other: an outbox holds one or two events, and each write's time is measured alone.
  for (const event of events) {
    let written = false;
    for (let round = 0; round < WRITE_ROUNDS && !written; round++) {
      const publishedAt = clock();
      await writeEntry(event, new Date(publishedAt));
      written = clock() - publishedAt <= FEED_WRITE_MAX_MS;
    }
    if (!written) throw new Error('feed entry not written in time');
  }
};
