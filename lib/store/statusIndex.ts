import type {
  GetItemCommandInput,
  GetItemCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand, QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { frameKeyOf, statusKeyOf } from '../records/keys.ts';
import type { RecordStatus, StatusRecord } from '../records/types.ts';
import { recordsTable } from '../settings/settings.ts';
import type { RecordKind } from '../types.ts';
import { FRAME_INDEX } from './frameRecords.ts';
import { OPERATOR_ATTRIBUTES, projectionOf } from './operatorAttributes.ts';
import { getStatusRecords } from './statusRecords.ts';
import type { Item } from './table.ts';

/*
 * Look-ups of status records for operations, through the `status` index (partition key `<kind>#<status>`, sort key
 * `acceptedAt`, lib/records/keys.ts statusKeyOf) and the `frame` index: never a table scan. The index projects what a listing
 * shows (INCLUDE), never `record`, so a listing reads no personal data.
 */

/**
 * The global secondary index of every status record by kind and state: partition key `statusKey`
 * (`<kind>#<status>`, lib/records/keys.ts statusKeyOf), sort key `acceptedAt`. Operations list and count records by
 * state through it, never by a scan.
 */
export const STATUS_INDEX = 'status';

/** Every state a record can be in, in the order of its life. */
export const RECORD_STATUSES: readonly RecordStatus[] = ['accepted', 'delivered', 'rejected', 'failed'];

/** The attributes of a listing's row ({@link StatusIndexEntry}), as a listing names them in its reads. */
const ENTRY_ATTRIBUTES = [
  'id',
  'kind',
  'status',
  'owner',
  'dealer',
  'frameKey',
  'attempts',
  'acceptedAt',
  'updatedAt',
  'downstreamId',
  'error',
] as const;

/** What the `status` index holds of a status record: a listing's row, without personal data. */
export type StatusIndexEntry = Pick<
  StatusRecord,
  | 'id'
  | 'kind'
  | 'status'
  | 'owner'
  | 'dealer'
  | 'frameKey'
  | 'attempts'
  | 'acceptedAt'
  | 'updatedAt'
  | 'downstreamId'
  | 'error'
>;

/**
 * The two reads the look-ups make. The service's JSON-protocol client by default ({@link serviceReader}); the
 * operator's scripts pass one over the SDK's client, which finds credentials the way the AWS CLI does.
 */
export interface TableReader {
  query(input: QueryCommandInput): Promise<QueryCommandOutput>;
  getItem(input: GetItemCommandInput): Promise<GetItemCommandOutput>;
}

/**
 * The reader over the container's DynamoDB client (lib/aws/clients.ts).
 *
 * @example
 * const reader = serviceReader();
 * await reader.getItem({ TableName: recordsTable(), Key: { pk: { S: id } } });
 */
export const serviceReader = (): TableReader => ({
  query: (input) => dynamoClient().send(new QueryCommand(input)) as Promise<QueryCommandOutput>,
  getItem: (input) => dynamoClient().send(new GetItemCommand(input)) as Promise<GetItemCommandOutput>,
});

/** Narrowing of a look-up besides the index's keys. */
export interface StatusQueryOptions {
  /** Only records accepted before this ISO time (a key condition: what is newer is not read at all). */
  acceptedBefore?: string;
  /** Only records accepted at or after this ISO time (a key condition, as `acceptedBefore`). */
  acceptedFrom?: string;
  /** Only the records of this client (a filter: read, then dropped). */
  owner?: string;
  /** Only the records of one of these clients (a filter); an empty list matches nothing. */
  ownersIn?: readonly string[];
  /** Only the records of none of these clients (a filter). */
  ownersNotIn?: readonly string[];
  /** Only the sales records of this DealerId (a filter). */
  dealer?: number;
  /** Items read per Query call (DynamoDB's `Limit`, before the filter); 100 unless told otherwise. */
  pageSize?: number;
  reader?: TableReader;
}

/** The Query input of one partition of the `status` index, with the options' key condition and filters. */
const statusQuery = (kind: RecordKind, status: RecordStatus, options: StatusQueryOptions) => {
  const filters: string[] = [];
  const names: Record<string, string> = {};
  const values: Item = { ':statusKey': { S: statusKeyOf(kind, status) } };
  const keyConditions = ['statusKey = :statusKey'];
  if (options.acceptedBefore !== undefined && options.acceptedFrom !== undefined) {
    keyConditions.push('acceptedAt BETWEEN :from AND :before');
    values[':from'] = { S: options.acceptedFrom };
    // BETWEEN takes its bounds inclusive; `acceptedBefore` is exclusive: one millisecond less (ISO sorts so).
    values[':before'] = { S: new Date(Date.parse(options.acceptedBefore) - 1).toISOString() };
  } else if (options.acceptedBefore !== undefined) {
    keyConditions.push('acceptedAt < :before');
    values[':before'] = { S: options.acceptedBefore };
  } else if (options.acceptedFrom !== undefined) {
    keyConditions.push('acceptedAt >= :from');
    values[':from'] = { S: options.acceptedFrom };
  }
  if (options.owner !== undefined) {
    filters.push('#owner = :owner');
    names['#owner'] = 'owner';
    values[':owner'] = { S: options.owner };
  }
  const ownerList = (list: readonly string[], prefix: string) => {
    names['#owner'] = 'owner';
    return list
      .map((owner, i) => {
        values[`:${prefix}${i}`] = { S: owner };
        return `:${prefix}${i}`;
      })
      .join(', ');
  };
  if (options.ownersIn !== undefined) filters.push(`#owner IN (${ownerList(options.ownersIn, 'in')})`);
  if (options.ownersNotIn !== undefined && options.ownersNotIn.length > 0)
    filters.push(`NOT (#owner IN (${ownerList(options.ownersNotIn, 'notIn')}))`);
  if (options.dealer !== undefined) {
    filters.push('dealer = :dealer');
    values[':dealer'] = { N: String(options.dealer) };
  }
  return {
    TableName: recordsTable(),
    IndexName: STATUS_INDEX,
    KeyConditionExpression: keyConditions.join(' AND '),
    ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
    ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
  } satisfies QueryCommandInput;
};

const entryOf = (item: Item): StatusIndexEntry => {
  const { pk: _pk, statusKey: _statusKey, ...entry } = unmarshall(item);
  return entry as StatusIndexEntry;
};

/** One page of a partition of the `status` index, read where the caller left off. */
export interface StatusPage {
  entries: StatusIndexEntry[];
  /** Where the next page starts (DynamoDB's LastEvaluatedKey); absent after the partition's last page. */
  lastKey?: Item;
}

/**
 * One page of the records of a kind in a state (with the same narrowing as {@link recordsByStatus}), newest
 * `acceptedAt` first with `newestFirst`, from `startKey` (a page's `lastKey`): for a listing that merges several
 * partitions and keeps its place in each (lib/console/recordListing.ts). At most `pageSize` items are read; a filter
 * may leave fewer, even none, with a `lastKey` still.
 *
 * @example
 * const { entries, lastKey } = await statusPage('caseRecord', 'failed', { newestFirst: true, pageSize: 50 });
 */
export const statusPage = async (
  kind: RecordKind,
  status: RecordStatus,
  options: StatusQueryOptions & { newestFirst?: boolean; startKey?: Item } = {},
): Promise<StatusPage> => {
  if (options.ownersIn?.length === 0) return { entries: [] };
  const reader = options.reader ?? serviceReader();
  const input = statusQuery(kind, status, options);
  const projection = projectionOf(ENTRY_ATTRIBUTES);
  const out = await reader.query({
    ...input,
    Select: 'SPECIFIC_ATTRIBUTES',
    ProjectionExpression: projection.ProjectionExpression,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, ...projection.ExpressionAttributeNames },
    ScanIndexForward: !options.newestFirst,
    Limit: options.pageSize ?? 100,
    ExclusiveStartKey: options.startKey,
  });
  return {
    entries: (out.Items ?? []).map(entryOf),
    ...(out.LastEvaluatedKey ? { lastKey: out.LastEvaluatedKey } : {}),
  };
};

/**
 * The records of a kind in a state, oldest `acceptedAt` first, page by page through the `status` index; no table
 * scan. A page the filters emptied is not yielded.
 *
 * @example
 * for await (const page of recordsByStatus('salesRegistration', 'failed', { acceptedBefore: hourAgo })) show(page);
 */
export async function* recordsByStatus(
  kind: RecordKind,
  status: RecordStatus,
  options: StatusQueryOptions = {},
): AsyncGenerator<StatusIndexEntry[]> {
  if (options.ownersIn?.length === 0) return;
  const reader = options.reader ?? serviceReader();
  const input = statusQuery(kind, status, options);
  // The row's attributes only, named (Select SPECIFIC_ATTRIBUTES): the operators' role may read nothing else.
  const projection = projectionOf(ENTRY_ATTRIBUTES);
  const listing = {
    ...input,
    Select: 'SPECIFIC_ATTRIBUTES' as const,
    ProjectionExpression: projection.ProjectionExpression,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, ...projection.ExpressionAttributeNames },
  };
  let startKey: Item | undefined;
  do {
    const out = await reader.query({
      ...listing,
      Limit: options.pageSize ?? 100,
      ExclusiveStartKey: startKey,
    });
    const entries = (out.Items ?? []).map(entryOf);
    if (entries.length > 0) yield entries;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/**
 * How many records of a kind are in a state (with the same narrowing as {@link recordsByStatus}): Query with
 * `Select: COUNT` over the partition, page by page (DynamoDB counts at most 1 MB of the index a call).
 *
 * @example
 * await countByStatus('caseRecord', 'failed') // 3
 */
export const countByStatus = async (
  kind: RecordKind,
  status: RecordStatus,
  options: Omit<StatusQueryOptions, 'pageSize'> = {},
): Promise<number> => {
  if (options.ownersIn?.length === 0) return 0;
  const reader = options.reader ?? serviceReader();
  const input = statusQuery(kind, status, options);
  let count = 0;
  let startKey: Item | undefined;
  do {
    const out = await reader.query({ ...input, Select: 'COUNT', ExclusiveStartKey: startKey });
    count += out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return count;
};

/**
 * The ids of an owner's sales records with this frame number, oldest `acceptedAt` first, through the `frame`
 * index (partition key `<owner>#<FrameNum>`); with `acceptedBefore`, only those accepted before then. No table scan.
 *
 * @example
 * await frameRecordIds('example-dealer', 'TESTFRAME00000001') // ['3f0c...', '9a1b...']
 */
export const frameRecordIds = async (
  owner: string,
  frameNum: string,
  options: { acceptedBefore?: string; reader?: TableReader } = {},
): Promise<string[]> => {
  const reader = options.reader ?? serviceReader();
  const ids: string[] = [];
  let startKey: Item | undefined;
  do {
    const out = await reader.query({
      TableName: recordsTable(),
      IndexName: FRAME_INDEX,
      KeyConditionExpression:
        options.acceptedBefore === undefined
          ? 'frameKey = :frameKey'
          : 'frameKey = :frameKey AND acceptedAt < :before',
      ExpressionAttributeValues: {
        ':frameKey': { S: frameKeyOf(owner, frameNum) },
        ...(options.acceptedBefore === undefined ? {} : { ':before': { S: options.acceptedBefore } }),
      },
      Select: 'SPECIFIC_ATTRIBUTES',
      ProjectionExpression: 'id',
      ExclusiveStartKey: startKey,
    });
    for (const item of out.Items ?? []) if (item.id?.S) ids.push(item.id.S);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return ids;
};

/**
 * One status record (a consistent GetItem): in full, or with `attributes` only those (the operators' tools on AWS
 * read {@link OPERATOR_ATTRIBUTES}: no `record`); undefined when there is none with that id (a content alias is no
 * record either).
 *
 * @example
 * const status = await readStatusRecord('3f0c...', { reader, attributes: OPERATOR_ATTRIBUTES });
 */
export const readStatusRecord = async (
  id: string,
  options: { reader?: TableReader; attributes?: readonly string[] } = {},
): Promise<StatusRecord | undefined> => {
  const reader = options.reader ?? serviceReader();
  const out = await reader.getItem({
    TableName: recordsTable(),
    Key: { pk: { S: id } },
    ConsistentRead: true,
    ...(options.attributes ? projectionOf(options.attributes) : {}),
  });
  if (!out.Item || out.Item.aliasOf) return undefined;
  const { pk: _pk, ...rest } = unmarshall(out.Item);
  return rest as StatusRecord;
};

/**
 * Every status record of a kind in a state: each page of the `status` index read back with a consistent
 * BatchGetItem, and only the records still in that state yielded (the index lags the table a little). For operator
 * actions such as redrive, which read {@link OPERATOR_ATTRIBUTES} only (no `record`); no table scan.
 *
 * @example
 * for await (const failed of statusRecordsIn('caseRecord', 'failed')) await reopen(failed);
 */
export async function* statusRecordsIn(
  kind: RecordKind,
  status: RecordStatus,
  options: { pageSize?: number } = {},
): AsyncGenerator<StatusRecord> {
  for await (const page of recordsByStatus(kind, status, { pageSize: options.pageSize ?? 100 })) {
    const records = await getStatusRecords(
      page.map((entry) => entry.id),
      { consistent: true, attributes: OPERATOR_ATTRIBUTES },
    );
    for (const entry of page) {
      const record = records.get(entry.id);
      if (record?.status === status) yield record;
    }
  }
}
