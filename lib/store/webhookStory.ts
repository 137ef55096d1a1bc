import { dynamoClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { encodeStoryEntry, type StoryEntry, WEBHOOK_STORY_LIMIT } from '../records/story.ts';
import { recordsTable } from '../settings/settings.ts';
import { conditionally } from './table.ts';

type WebhookEntry = Extract<StoryEntry, { type: 'webhook' }>;

/** One conditional write: appended while the record exists (never a stub for an expired one) and has room. */
const append = (recordId: string, entry: WebhookEntry) =>
  conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: recordId } },
        UpdateExpression: 'SET webhookStory = list_append(if_not_exists(webhookStory, :empty), :entry)',
        ConditionExpression:
          'attribute_exists(id) AND (attribute_not_exists(webhookStory) OR size(webhookStory) < :limit)',
        ExpressionAttributeValues: {
          ':empty': { L: [] },
          ':entry': { L: [{ S: encodeStoryEntry(entry, { recordId }) }] },
          ':limit': { N: String(WEBHOOK_STORY_LIMIT) },
        },
      }),
    ),
  );

/** Drops the oldest webhook entry of a full story (two writers dropping at once drop two: a bound, not a count). */
const dropOldest = (recordId: string) =>
  conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: recordId } },
        UpdateExpression: 'REMOVE webhookStory[0]',
        ConditionExpression: 'attribute_exists(id) AND size(webhookStory) >= :limit',
        ExpressionAttributeValues: { ':limit': { N: String(WEBHOOK_STORY_LIMIT) } },
      }),
    ),
  );

/**
 * Notes a webhook attempt in its record's story (`webhookStory`, the newest WEBHOOK_STORY_LIMIT): one UpdateItem of
 * the record, conditional on the record existing, so an entry never outlives its record (TTL) nor makes one up.
 * Apart from `story`, which the delivery writes replace whole once full: the two never overwrite each other. When
 * the story is full the oldest entry is dropped first (two more writes, after the 20th attempt only).
 *
 * @returns whether the entry was written (false: no such record).
 * @example
 * await noteWebhookAttempt(recordId, { at, type: 'webhook', client: 'example-dealer', webhookId, status: 200, durationMs: 41 });
 */
export const noteWebhookAttempt = async (recordId: string, entry: WebhookEntry): Promise<boolean> => {
  if (await append(recordId, entry)) return true;
  // Refused: no record, or a full story. Make room (refused too when there is no record), then append once more.
  await dropOldest(recordId);
  return append(recordId, entry);
};
