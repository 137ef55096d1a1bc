import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { recordsTable } from '../config.ts';
import type { RecordKind } from '../types.ts';
import { batchDeleteItems, batchGetItems, batchPutItems, type Item } from './table.ts';
import type { IdempotencyEntry, StatusRecord } from './types.ts';

/** Status records are keyed by the record id itself. */
export const toItem = (record: StatusRecord): Item =>
  marshall({ pk: record.id, ...record }, { removeUndefinedValues: true });

export const fromItem = (item: Item): StatusRecord => {
  const { pk: _pk, ...rest } = unmarshall(item);
  return rest as StatusRecord;
};

/** Partition key of an idempotency entry: the caller's key is hashed, so any text is a safe key. */
export const idempotencyPk = (kind: RecordKind, keyHash: string): string => `idem#${kind}#${keyHash}`;

/**
 * Reads status records by id; ids without a record are absent from the map.
 *
 * @example
 * const records = await getStatusRecords(['3f0c...']);
 */
export const getStatusRecords = async (
  ids: string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, StatusRecord>> => {
  const items = await batchGetItems(ids, { consistentRead: options.consistent ?? false });
  return new Map([...items].map(([pk, item]) => [pk, fromItem(item)]));
};

/** Reads one status record, or undefined. */
export const getStatusRecord = async (id: string): Promise<StatusRecord | undefined> => {
  const out = await dynamoClient().send(
    new GetItemCommand({ TableName: recordsTable(), Key: { pk: { S: id } }, ConsistentRead: true }),
  );
  return out.Item ? fromItem(out.Item) : undefined;
};

/** Writes new status records and idempotency entries together, 25 items a call. */
export const putStatusRecords = (records: StatusRecord[], entries: IdempotencyEntry[] = []): Promise<void> =>
  batchPutItems([
    ...records.map(toItem),
    ...entries.map((entry) => marshall({ pk: idempotencyPk(entry.kind, entry.keyHash), ...entry })),
  ]);

/**
 * Writes a status record unless one with its id exists. One call: the fast path for a single record.
 * @returns false when the id was already taken.
 */
export const putStatusRecordIfAbsent = async (record: StatusRecord): Promise<boolean> => {
  try {
    await dynamoClient().send(
      new PutItemCommand({
        TableName: recordsTable(),
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

/** Removes status records that were written but never queued (the caller got 503 and will retry). */
export const deleteStatusRecords = (ids: string[]): Promise<void> => batchDeleteItems(ids);

/** Records on the first record of a content that the same content was accepted again later, as `latestId`. */
export const pointToLatest = async (
  firstId: string,
  latestId: string,
  latestAcceptedAt: string,
): Promise<void> => {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: firstId } },
      UpdateExpression: 'SET latestId = :id, latestAcceptedAt = :at',
      ExpressionAttributeValues: { ':id': { S: latestId }, ':at': { S: latestAcceptedAt } },
    }),
  );
};

/** Reads idempotency entries, keyed by partition key. */
export const readIdempotencyEntry = (item: Item | undefined): IdempotencyEntry | undefined =>
  item ? (unmarshall(item) as IdempotencyEntry) : undefined;
