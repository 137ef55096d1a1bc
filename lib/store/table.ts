import { setTimeout as pause } from 'node:timers/promises';
import type { AttributeValue, WriteRequest } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
} from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import { projectionOf } from './operatorAttributes.ts';

/** DynamoDB's limits per call. */
const BATCH_GET_LIMIT = 100;
const BATCH_WRITE_LIMIT = 25;
const MAX_UNPROCESSED_ROUNDS = 8;

export type Item = Record<string, AttributeValue>;

const chunk = <T>(items: T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
};

/**
 * Reads items by partition key, 100 keys a call, retrying what DynamoDB leaves unprocessed; with `attributes`, only
 * those (and `pk`).
 *
 * @example
 * const found = await batchGetItems(['a1', 'b2']); // Map { 'a1' => { pk: { S: 'a1' }, ... } }
 */
export const batchGetItems = async (
  pks: string[],
  options: { consistentRead?: boolean; attributes?: readonly string[]; abortSignal?: AbortSignal } = {},
): Promise<Map<string, Item>> => {
  // The partition key is always read: the items are found by it.
  const projection = options.attributes
    ? projectionOf([...new Set(['pk', ...options.attributes])])
    : undefined;
  const found = new Map<string, Item>();
  const unique = [...new Set(pks)];
  if (unique.length === 0) return found;
  const table = recordsTable();
  await Promise.all(
    chunk(unique, BATCH_GET_LIMIT).map(async (keys) => {
      let pending: Item[] = keys.map((pk) => ({ pk: { S: pk } }));
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_UNPROCESSED_ROUNDS) throw new Error('DynamoDB left keys unprocessed');
        if (round > 0) await pause(25 * 2 ** round);
        const out = await dynamoClient().send(
          new BatchGetItemCommand({
            RequestItems: {
              [table]: { Keys: pending, ConsistentRead: options.consistentRead, ...projection },
            },
          }),
          { abortSignal: options.abortSignal },
        );
        for (const item of out.Responses?.[table] ?? []) found.set(item.pk.S as string, item);
        pending = (out.UnprocessedKeys?.[table]?.Keys as Item[] | undefined) ?? [];
      }
    }),
  );
  return found;
};

const batchWrite = async (requests: WriteRequest[]): Promise<void> => {
  const table = recordsTable();
  await Promise.all(
    chunk(requests, BATCH_WRITE_LIMIT).map(async (batch) => {
      let pending = batch;
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_UNPROCESSED_ROUNDS) throw new Error('DynamoDB left writes unprocessed');
        if (round > 0) await pause(25 * 2 ** round);
        const out = await dynamoClient().send(
          new BatchWriteItemCommand({ RequestItems: { [table]: pending } }),
        );
        pending = out.UnprocessedItems?.[table] ?? [];
      }
    }),
  );
};

/** Writes whole items, 25 a call. */
export const batchPutItems = (items: Item[]): Promise<void> =>
  batchWrite(items.map((Item) => ({ PutRequest: { Item } })));

/** Deletes items by partition key, 25 a call. */
export const batchDeleteItems = (pks: string[]): Promise<void> =>
  batchWrite(pks.map((pk) => ({ DeleteRequest: { Key: { pk: { S: pk } } } })));

/**
 * Runs a conditional write and says whether its condition held: false for a refused condition (someone else
 * wrote first), any other failure thrown as it came.
 *
 * @example
 * const created = await conditionally(dynamoClient().send(new PutItemCommand({ …, ConditionExpression })));
 */
export const conditionally = async (write: Promise<unknown>): Promise<boolean> => {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};
