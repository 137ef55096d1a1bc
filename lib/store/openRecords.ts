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
 * worker's try resets it), and, given `at`, dates it (`requeuedAt`: the reconciler tells by it whether a record's
 * spacing was set before a downstream's hold closed). `restartSpacing` counts this re-queue as the first.
 *
 * @returns false when the record is no longer `accepted` with that `dueAt`, or is leased.
 * @example
 * if (await postponeDue(id, status.dueAt, dueAfter(now, 300), now, { at: now })) queue(status);
 */
export const postponeDue = async (
  id: string,
  seen: string,
  dueAt: string,
  now: Date,
  options: { at?: Date; restartSpacing?: boolean } = {},
): Promise<boolean> => {
  const set = [
    'dueAt = :due',
    options.restartSpacing ? 'requeues = :one' : 'requeues = if_not_exists(requeues, :zero) + :one',
  ];
  const values: Record<string, { S: string } | { N: string }> = {
    ':due': { S: dueAt },
    ':seen': { S: seen },
    ':now': { S: now.toISOString() },
    ':accepted': { S: 'accepted' },
    ':one': { N: '1' },
  };
  if (!options.restartSpacing) values[':zero'] = { N: '0' };
  if (options.at) {
    set.push('requeuedAt = :at');
    values[':at'] = { S: options.at.toISOString() };
  }
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: `SET ${set.join(', ')}`,
        ConditionExpression:
          '#status = :accepted AND dueAt = :seen AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
};
