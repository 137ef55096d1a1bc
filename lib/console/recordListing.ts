import { clientsConfig } from '../clients/clientsConfig.ts';
import { statusKeyOf } from '../records/keys.ts';
import type { RecordStatus } from '../records/types.ts';
import {
  RECORD_STATUSES,
  type StatusIndexEntry,
  type StatusQueryOptions,
  statusPage,
} from '../store/statusIndex.ts';
import type { Item } from '../store/table.ts';
import type { RecordKind } from '../types.ts';
import { RECORD_KINDS } from '../types.ts';
import type { ListPosition } from './listCursor.ts';
import type { ListFilters } from './listFilters.ts';
import { type ConsoleRow, isTestClient, rowOf, STORE_KIND } from './rows.ts';

/** Rows a page of a console list holds. */
export const PAGE_SIZE = 50;

/**
 * Query calls one page may make at most. A filter that matches few records (a small client) reads pages of the
 * index it then drops; past this budget the page ends early, with a cursor to go on (a short page is still a page).
 */
const MAX_QUERIES = 24;

/** A listing's page: its rows, newest first, and where the next page starts (absent: no more). */
export interface ListingPage {
  rows: ConsoleRow[];
  next?: Extract<ListPosition, { kind: 'listing' }>;
}

interface Partition {
  kind: RecordKind;
  status: RecordStatus;
  key: string;
  /** Where this partition's next read starts: absent at its newest record. */
  startKey?: Item;
  done: boolean;
  /** Entries read and not given yet, newest first. */
  buffer: StatusIndexEntry[];
  /** The cursor's key of the last entry given (or of the position it started at). */
  given?: [string, string] | 0;
}

/** The `status` index partitions a listing reads: the filters' kind and state, else all of them. */
export const listingPartitions = (filters: Pick<ListFilters, 'kind' | 'state'>): string[] =>
  (filters.kind ? [STORE_KIND[filters.kind]] : RECORD_KINDS).flatMap((kind) =>
    (filters.state ? [filters.state] : RECORD_STATUSES).map((status) => statusKeyOf(kind, status)),
  );

/**
 * How the client and mode filters narrow a `status` index read: a filter on `owner` (the index has no `test`
 * attribute; a client's mode decides whether its records are test records). Undefined when they exclude everything.
 */
const ownerNarrowing = (filters: ListFilters): StatusQueryOptions | undefined => {
  const testClients = clientsConfig.clients.filter((client) => client.mode === 'test').map((c) => c.name);
  if (filters.client !== undefined) {
    if (filters.mode !== undefined && isTestClient(filters.client) !== (filters.mode === 'test'))
      return undefined;
    return { owner: filters.client };
  }
  if (filters.mode === 'test') return testClients.length > 0 ? { ownersIn: testClients } : undefined;
  if (filters.mode === 'live') return { ownersNotIn: testClients };
  return {};
};

/**
 * One page of the records the filters (no `q`) select, newest first: the `status` index partitions of the filters'
 * kinds and states (8 at most) each read newest first from where the cursor left it, and merged. The accepted dates
 * are each read's key condition, client and mode a filter on `owner`. Never a table scan.
 *
 * @example
 * const page = await listRecords({ state: 'failed' }); // { rows: [...50 newest failed], next: { kind: 'listing', … } }
 */
export const listRecords = async (
  filters: ListFilters,
  position?: Extract<ListPosition, { kind: 'listing' }>,
  pageSize = PAGE_SIZE,
): Promise<ListingPage> => {
  const narrowing = ownerNarrowing(filters);
  if (!narrowing) return { rows: [] };
  const options: StatusQueryOptions = {
    ...narrowing,
    ...(filters.from !== undefined ? { acceptedFrom: filters.from } : {}),
    ...(filters.to !== undefined ? { acceptedBefore: filters.to } : {}),
    pageSize,
  };
  const partitions: Partition[] = listingPartitions(filters).map((key) => {
    const [kind, status] = key.split('#') as [RecordKind, RecordStatus];
    const at = position?.partitions[key];
    return {
      kind,
      status,
      key,
      done: at === 0,
      buffer: [],
      ...(at
        ? { given: at, startKey: { pk: { S: at[1] }, statusKey: { S: key }, acceptedAt: { S: at[0] } } }
        : {}),
      ...(at === 0 ? { given: 0 as const } : {}),
    };
  });

  const rows: ConsoleRow[] = [];
  let queries = 0;
  const read = async (partition: Partition) => {
    const page = await statusPage(partition.kind, partition.status, {
      ...options,
      newestFirst: true,
      startKey: partition.startKey,
    });
    partition.buffer = page.entries;
    partition.startKey = page.lastKey;
    partition.done = page.lastKey === undefined;
  };
  while (rows.length < pageSize) {
    const empty = partitions.filter((p) => !p.done && p.buffer.length === 0);
    if (empty.length > 0) {
      if (queries + empty.length > MAX_QUERIES) break;
      queries += empty.length;
      await Promise.all(empty.map(read));
      // A filter may have emptied a read that is not the partition's last: read on before merging.
      continue;
    }
    // Every partition not done has entries: the newest head of them all is the newest record left.
    let newest: Partition | undefined;
    for (const p of partitions)
      if (p.buffer.length > 0 && (!newest || p.buffer[0].acceptedAt > newest.buffer[0].acceptedAt))
        newest = p;
    if (!newest) break;
    const entry = newest.buffer.shift() as StatusIndexEntry;
    newest.given = [entry.acceptedAt, entry.id];
    rows.push(rowOf(entry));
  }

  const next: Record<string, [string, string] | 0> = {};
  for (const p of partitions) {
    if (p.buffer.length > 0) {
      if (p.given !== undefined) next[p.key] = p.given;
      continue;
    }
    if (p.done) next[p.key] = 0;
    else if (p.startKey) {
      const { acceptedAt, pk } = p.startKey;
      next[p.key] = [acceptedAt?.S ?? '', pk?.S ?? ''];
    }
  }
  const more = partitions.some((p) => p.buffer.length > 0 || !p.done);
  return { rows, ...(more ? { next: { kind: 'listing', partitions: next } } : {}) };
};
