import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../config.ts';
import type { RecordKind } from '../types.ts';
import { conditionally, type Item } from './table.ts';

/**
 * The sparse global secondary index of `accepted` records: partition key `openKind` (present only while a record
 * is `accepted`), sort key `dueAt`. Keys only: whoever reads it reads the records themselves, consistently.
 */
export const OPEN_INDEX = 'open';

/**
 * The ids of `accepted` records of a kind, oldest `dueAt` first, page by page through the `open` index; with
 * `dueBefore`, only those due by then. No table scan, whatever the table holds.
 *
 * @example
 * for await (const ids of openRecordIds('salesRegistration', { dueBefore: new Date().toISOString() })) requeue(ids);
 */
export async function* openRecordIds(
  kind: RecordKind,
  options: { dueBefore?: string; pageSize?: number } = {},
): AsyncGenerator<string[]> {
  let startKey: Item | undefined;
  do {
    const out = await dynamoClient().send(
      new QueryCommand({
        TableName: recordsTable(),
        IndexName: OPEN_INDEX,
        KeyConditionExpression:
          options.dueBefore === undefined ? 'openKind = :kind' : 'openKind = :kind AND dueAt <= :due',
        ExpressionAttributeValues: {
          ':kind': { S: kind },
          ...(options.dueBefore === undefined ? {} : { ':due': { S: options.dueBefore } }),
        },
        Limit: options.pageSize ?? 100,
        ExclusiveStartKey: startKey,
      }),
    );
    const ids = (out.Items ?? []).map((item) => item.pk?.S ?? '').filter(Boolean);
    if (ids.length > 0) yield ids;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/**
 * Moves an `accepted` record's `dueAt` from `seen` to `dueAt`, only if nobody changed it meanwhile and no worker
 * holds a lease on it at `now`: whoever moves it first is the one who queues the record again, and a record being
 * delivered is left to its worker.
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
        UpdateExpression: 'SET dueAt = :due',
        ConditionExpression:
          '#status = :accepted AND dueAt = :seen AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':due': { S: dueAt },
          ':seen': { S: seen },
          ':now': { S: now.toISOString() },
          ':accepted': { S: 'accepted' },
        },
      }),
    ),
  );
};
