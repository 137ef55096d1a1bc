import { dynamoClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../config.ts';
import type { RecordKind } from '../types.ts';
import { type DueIndex, dueIds } from './sparseIndex.ts';
import { conditionally } from './table.ts';

/**
 * The sparse global secondary index of `accepted` records: partition key `openKind` (present only while a record
 * is `accepted`), sort key `dueAt`. Keys only: whoever reads it reads the records themselves, consistently.
 */
export const OPEN_INDEX = 'open';

/** The `open` index as a due index: `openKind` sorted by `dueAt`. */
const OPEN: DueIndex = { name: OPEN_INDEX, partitionKey: 'openKind', sortKey: 'dueAt' };

/**
 * The ids of `accepted` records of a kind, oldest `dueAt` first, page by page through the `open` index; with
 * `dueBefore`, only those due by then. No table scan, whatever the table holds.
 *
 * @example
 * for await (const ids of openRecordIds('salesRegistration', { dueBefore: new Date().toISOString() })) requeue(ids);
 */
export const openRecordIds = (
  kind: RecordKind,
  options: { dueBefore?: string; pageSize?: number } = {},
): AsyncGenerator<string[]> => dueIds(OPEN, kind, options);

/**
 * Moves an `accepted` record's `dueAt` from `seen` to `dueAt`, only if nobody changed it meanwhile and no worker
 * holds a lease on it at `now`: whoever moves it first is the one who queues the record again, and a record being
 * delivered is left to its worker. The same write counts the re-queue (`requeues`, which spaces the next one; a
 * worker's try resets it).
 *
 * @returns false when the record is no longer `accepted` with that `dueAt`, or is leased.
 * @example
 * if (await postponeDue(id, status.dueAt, dueAfter(now, 300), now)) queue(status);
 */
export const postponeDue = async (id: string, seen: string, dueAt: string, now: Date): Promise<boolean> => {
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'SET dueAt = :due, requeues = if_not_exists(requeues, :zero) + :one',
        ConditionExpression:
          '#status = :accepted AND dueAt = :seen AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':due': { S: dueAt },
          ':seen': { S: seen },
          ':now': { S: now.toISOString() },
          ':accepted': { S: 'accepted' },
          ':zero': { N: '0' },
          ':one': { N: '1' },
        },
      }),
    ),
  );
};
