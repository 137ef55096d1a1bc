import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import type { RecordKind } from '../types.ts';
import type { Item } from './table.ts';

/**
 * A sparse, keys-only global secondary index of work due at a time: partition key the record's kind (present only
 * while there is work), sort key the ISO time it is due. The `open` (to queue), `events` (to publish) and `purge`
 * (personal data to remove) indexes are all of this shape.
 */
export interface DueIndex {
  name: string;
  partitionKey: string;
  sortKey: string;
}

export interface DueQuery {
  /** Only entries due at or before this ISO time; all of the kind when absent. */
  dueBefore?: string;
  /** Ids a page (default 100). */
  pageSize?: number;
  /** Ids in all at most (default: no limit). */
  limit?: number;
}

/**
 * The record ids of a partition (a kind, or for the `open` index a kind and mode) in a due index, earliest first,
 * page by page; with `dueBefore`, only those due by then. No table scan, whatever the table holds.
 *
 * @example
 * for await (const ids of dueIds(PURGE, 'caseRecord', { dueBefore: now, limit: 500 })) purge(ids);
 */
export async function* dueIds(
  index: DueIndex,
  partition: RecordKind | string,
  query: DueQuery = {},
): AsyncGenerator<string[]> {
  let left = query.limit ?? Number.POSITIVE_INFINITY;
  let startKey: Item | undefined;
  const { partitionKey: p, sortKey: s } = index;
  do {
    if (left <= 0) return;
    const out = await dynamoClient().send(
      new QueryCommand({
        TableName: recordsTable(),
        IndexName: index.name,
        KeyConditionExpression:
          query.dueBefore === undefined ? `${p} = :kind` : `${p} = :kind AND ${s} <= :due`,
        ExpressionAttributeValues: {
          ':kind': { S: partition },
          ...(query.dueBefore === undefined ? {} : { ':due': { S: query.dueBefore } }),
        },
        Limit: Math.min(query.pageSize ?? 100, left),
        ExclusiveStartKey: startKey,
      }),
    );
    const ids = (out.Items ?? []).map((item) => item.pk?.S ?? '').filter(Boolean);
    left -= ids.length;
    if (ids.length > 0) yield ids;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
