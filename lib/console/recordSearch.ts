import { unmarshall } from '@aws-sdk/util-dynamodb';
import { clientsConfig } from '../clients/clientsConfig.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { recordsTable } from '../settings/settings.ts';
import { recordIdsByDownstreamId } from '../store/downstreamIdIndex.ts';
import { caseIdsByFrame, frameRowEntries } from '../store/frameRecords.ts';
import { projectionOf } from '../store/operatorAttributes.ts';
import { serviceReader } from '../store/statusIndex.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import type { ListPosition } from './listCursor.ts';
import type { ListFilters } from './listFilters.ts';
import { PAGE_SIZE } from './recordListing.ts';
import { type ConsoleRow, newestFirst, type RowSource, rowOf, STORE_KIND } from './rows.ts';

/** What the search reads of a record: a row's attributes (never `record`), and a content alias's target. */
const ROW_ATTRIBUTES = [
  'pk',
  'id',
  'kind',
  'status',
  'owner',
  'frameKey',
  'attempts',
  'acceptedAt',
  'updatedAt',
  'test',
  'aliasOf',
];

/** Records of one frame number read at most per client (a frame is sold a few times in its life, not hundreds). */
const MAX_PER_FRAME = 200;

const recordId = new RegExp(RECORD_ID_PATTERN);

/** The record at an id (a GetItem naming a row's attributes), following a content alias to its record. */
const byId = async (id: string): Promise<RowSource[]> => {
  const reader = serviceReader();
  const read = async (key: string) => {
    const out = await reader.getItem({
      TableName: recordsTable(),
      Key: { pk: { S: key } },
      ...projectionOf(ROW_ATTRIBUTES),
    });
    return out.Item ? unmarshall(out.Item) : undefined;
  };
  let item = await read(id);
  // An id a client was given may be a content alias's place (lib/records/types.ts ContentAlias): its record.
  if (item?.aliasOf && recordId.test(item.aliasOf)) item = await read(item.aliasOf);
  return item && !item.aliasOf && item.status ? [item as RowSource] : [];
};

/** The sales records of this frame number: the `frame` index of each client that may send sales (or the one asked). */
const byFrame = async (frameNum: string, client?: string): Promise<RowSource[]> => {
  const owners =
    client !== undefined
      ? [client]
      : clientsConfig.clients.filter((c) => c.dealers.length > 0).map((c) => c.name);
  const found = await Promise.all(owners.map((owner) => frameRowEntries(owner, frameNum, MAX_PER_FRAME)));
  return found.flatMap((entries, i) =>
    entries.map((entry) => ({ ...entry, kind: 'salesRegistration' as const, owner: owners[i] })),
  );
};

/** The cases naming this frame number (any client): the `frame` index's case partition, then the rows by id. */
const byCaseFrame = async (frameNo: string): Promise<RowSource[]> => {
  const ids = await caseIdsByFrame(frameNo, MAX_PER_FRAME);
  if (ids.length === 0) return [];
  const records = await getStatusRecords(ids, { attributes: ROW_ATTRIBUTES });
  return [...records.values()];
};

/** The records SAP or Salesforce answered with this id: the `downstreamId` index, then the rows by id. */
const byDownstreamId = async (downstreamId: string): Promise<RowSource[]> => {
  const ids = await recordIdsByDownstreamId(downstreamId);
  if (ids.length === 0) return [];
  const records = await getStatusRecords(ids, { attributes: ROW_ATTRIBUTES });
  return [...records.values()];
};

/** Whether a row passes the filters besides `q` (a search's results are few: filtered once read). */
const passes = (row: ConsoleRow, filters: ListFilters): boolean =>
  (filters.kind === undefined || row.kind === filters.kind) &&
  (filters.state === undefined || row.state === filters.state) &&
  (filters.client === undefined || row.client === filters.client) &&
  (filters.mode === undefined || row.test === (filters.mode === 'test')) &&
  (filters.from === undefined || row.acceptedAt >= filters.from) &&
  (filters.to === undefined || row.acceptedAt < filters.to);

/** Whether a row comes after a search's position in the list's order (newest first, then by id). */
const after = (row: ConsoleRow, position: { acceptedAt: string; id: string }): boolean =>
  newestFirst(row, { ...row, acceptedAt: position.acceptedAt, id: position.id }) > 0;

/**
 * A page of the records `q` names, with the other filters: `q` is looked up in every way it can be at once, each
 * one read of an index or the table (a record id: a GetItem; a frame number: the `frame` index of each sales
 * client, and its case partition, whose few cases are then read by id; an SAP document number or Salesforce id: the
 * `downstreamId` index), never a scan. Kind, state, client,
 * mode and dates then filter the few records found.
 *
 * @example
 * await searchRecords({ q: 'JH2PC4000NK000123' }) // { rows: [{ id: '3f0c…', frameNumber: 'JH2PC4000NK000123', … }] }
 */
export const searchRecords = async (
  filters: ListFilters & { q: string },
  position?: Extract<ListPosition, { kind: 'search' }>,
  pageSize = PAGE_SIZE,
): Promise<{ rows: ConsoleRow[]; next?: Extract<ListPosition, { kind: 'search' }> }> => {
  const { q } = filters;
  const salesMayMatch = filters.kind === undefined || STORE_KIND[filters.kind] === 'salesRegistration';
  const clientMayHaveSales =
    filters.client === undefined ||
    (clientsConfig.clients.find((c) => c.name === filters.client)?.dealers.length ?? 0) > 0;
  const casesMayMatch = filters.kind === undefined || STORE_KIND[filters.kind] === 'caseRecord';
  const found = await Promise.all([
    recordId.test(q) ? byId(q) : [],
    salesMayMatch && clientMayHaveSales ? byFrame(q, filters.client) : [],
    casesMayMatch ? byCaseFrame(q) : [],
    byDownstreamId(q),
  ]);
  const unique = new Map<string, ConsoleRow>();
  for (const source of found.flat()) unique.set(source.id, rowOf(source));
  const rows = [...unique.values()]
    .filter((row) => passes(row, filters) && (!position || after(row, position)))
    .sort(newestFirst);
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  return {
    rows: page,
    ...(rows.length > pageSize && last
      ? { next: { kind: 'search', acceptedAt: last.acceptedAt, id: last.id } }
      : {}),
  };
};
