import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import type { RecordKind } from '../types.ts';
import { type DueIndex, dueIds } from './sparseIndex.ts';
import { conditionally } from './table.ts';

/**
 * The sparse global secondary index of `accepted` records: partition key `openKind` (present only while a record
 * is `accepted`: its kind, `<kind>#test` for a test record, lib/records/keys.ts openKindOf), sort key `dueAt`.
 * Keys only: whoever reads it reads the records themselves, consistently.
 */
export const OPEN_INDEX = 'open';

/** The `open` index as a due index: `openKind` sorted by `dueAt`. */
const OPEN: DueIndex = { name: OPEN_INDEX, partitionKey: 'openKind', sortKey: 'dueAt' };

/**
 * The ids of `accepted` records of one `open` partition (a kind's live records, or its test records:
 * lib/delivery/isolation.ts openPartitions), oldest `dueAt` first, page by page through the `open` index; with
 * `dueBefore`, only those due by then; with `limit`, that many at most in all. No table scan, whatever the table
 * holds.
 *
 * @example
 * for await (const ids of openRecordIds('salesRegistration', { dueBefore: new Date().toISOString() })) requeue(ids);
 * for await (const ids of openRecordIds('caseRecord#test', { limit: 10, pageSize: 10 })) firstTen.push(...ids);
 */
export const openRecordIds = (
  openKind: RecordKind | string,
  options: { dueBefore?: string; pageSize?: number; limit?: number } = {},
): AsyncGenerator<string[]> => dueIds(OPEN, openKind, options);

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

/** What postponeDue changed, as it was before: undoPostpone puts it back. */
export interface DueBefore {
  dueAt: string;
  requeues?: number;
  requeuedAt?: string;
}

/**
 * Undoes a postponeDue whose message could not be queued: the record is due again as it was (its `dueAt`, its
 * count of re-queues and their date), so the next run queues it, instead of it waiting out a spacing (up to an
 * hour after a hold closed) with no message anywhere. Only if nobody moved it since (`dueAt` still `movedTo`).
 *
 * @returns false when the record has moved on meanwhile (a worker's try, another reconciler): nothing to undo.
 * @example
 * if ((await sendRecords(url, [message])).length > 0) await undoPostpone(id, nextDue, status);
 */
export const undoPostpone = async (id: string, movedTo: string, before: DueBefore): Promise<boolean> => {
  const set = ['dueAt = :before'];
  const remove: string[] = [];
  const values: Record<string, { S: string } | { N: string }> = {
    ':before': { S: before.dueAt },
    ':moved': { S: movedTo },
    ':accepted': { S: 'accepted' },
  };
  if (before.requeues === undefined) remove.push('requeues');
  else {
    set.push('requeues = :requeues');
    values[':requeues'] = { N: String(before.requeues) };
  }
  if (before.requeuedAt === undefined) remove.push('requeuedAt');
  else {
    set.push('requeuedAt = :requeuedAt');
    values[':requeuedAt'] = { S: before.requeuedAt };
  }
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ConditionExpression: '#status = :accepted AND dueAt = :moved',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * How many `accepted` records one `open` partition holds, counted up to `atMost` (Query with `Select: COUNT`, a
 * page of at most 5,000 keys a call, so a backlog of any size costs a bounded read): the records waiting for a
 * downstream. Answers `atMost` when there are at least as many.
 *
 * @example
 * await countOpen('caseRecord', 20_000) // 42
 */
export const countOpen = async (openKind: RecordKind | string, atMost: number): Promise<number> => {
  let count = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const out = await dynamoClient().send(
      new QueryCommand({
        TableName: recordsTable(),
        IndexName: OPEN_INDEX,
        KeyConditionExpression: 'openKind = :kind',
        ExpressionAttributeValues: { ':kind': { S: openKind } },
        Select: 'COUNT',
        Limit: Math.min(5_000, atMost - count),
        ExclusiveStartKey: startKey,
      }),
    );
    count += out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey && count < atMost);
  return Math.min(count, atMost);
};
