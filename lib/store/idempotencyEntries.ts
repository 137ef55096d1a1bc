import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import type { IdempotencyEntry, IdempotencyState } from '../records/types.ts';
import { recordsTable } from '../settings/settings.ts';
import type { RecordKind } from '../types.ts';
import type { CallOptions } from './statusRecords.ts';
import { conditionally } from './table.ts';

/** Partition key of an idempotency entry: the caller's key is hashed, so any text is a safe key. */
export const idempotencyPk = (kind: RecordKind, keyHash: string): string => `idem#${kind}#${keyHash}`;

const keyOf = (kind: RecordKind, keyHash: string) => ({ pk: { S: idempotencyPk(kind, keyHash) } });

/**
 * Takes an `Idempotency-Key` for a request: writes its entry unless a live one exists (an expired entry that TTL
 * has not removed yet counts as absent).
 *
 * @returns true when this request holds the key now.
 * @example
 * if (!(await claimIdempotencyKey(entry, nowSeconds))) { const earlier = await readIdempotencyEntry(kind, keyHash); }
 */
export const claimIdempotencyKey = async (
  entry: IdempotencyEntry,
  nowSeconds: number,
  options: CallOptions = {},
): Promise<boolean> => {
  return conditionally(
    dynamoClient().send(
      new PutItemCommand({
        TableName: recordsTable(),
        Item: marshall({ pk: idempotencyPk(entry.kind, entry.keyHash), ...entry }),
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
        ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
      }),
      options,
    ),
  );
};

/**
 * Reads the entry of an `Idempotency-Key` (a consistent read), or undefined.
 *
 * @example
 * const entry = await readIdempotencyEntry('caseRecord', keyHash);
 */
export const readIdempotencyEntry = async (
  kind: RecordKind,
  keyHash: string,
  options: CallOptions = {},
): Promise<IdempotencyEntry | undefined> => {
  const out = await dynamoClient().send(
    new GetItemCommand({ TableName: recordsTable(), Key: keyOf(kind, keyHash), ConsistentRead: true }),
    options,
  );
  if (!out.Item) return undefined;
  const { pk: _pk, ...entry } = unmarshall(out.Item);
  return entry as IdempotencyEntry;
};

/**
 * Moves an entry to `state`, only if the request named by `heldSince` (its `startedAt`) still holds it; with
 * `startedAt`, the caller takes the key over under that new time.
 *
 * @returns false when someone else holds the key now.
 * @example
 * await setIdempotencyState('caseRecord', keyHash, { heldSince: startedAt, state: 'done' });
 */
export const setIdempotencyState = async (
  kind: RecordKind,
  keyHash: string,
  change: { heldSince: string; state: IdempotencyState; startedAt?: string },
  options: CallOptions = {},
): Promise<boolean> => {
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: keyOf(kind, keyHash),
        UpdateExpression: 'SET #state = :state, startedAt = :startedAt',
        ConditionExpression: 'startedAt = :heldSince',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':state': { S: change.state },
          ':startedAt': { S: change.startedAt ?? change.heldSince },
          ':heldSince': { S: change.heldSince },
        },
      }),
      options,
    ),
  );
};
