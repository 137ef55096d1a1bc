import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { OPERATOR_ATTRIBUTES } from '../../lib/store/operatorAttributes.ts';
import {
  countByStatus,
  frameRecordIds,
  readStatusRecord,
  recordsByStatus,
  type StatusQueryOptions,
  type TableReader,
} from '../../lib/store/statusIndex.ts';
import { modeNarrowing, ofMode } from './clientMode.ts';
import { rowOf, type StateCounts } from './format.ts';
import type { RecordRow, RecordsOptions } from './types.ts';

/**
 * The narrowing every look-up of the options shares: age as a key condition, client, mode (by owner:
 * tools/records/clientMode.ts) and dealer as filters.
 */
const narrowing = (options: RecordsOptions, reader: TableReader, now: Date): StatusQueryOptions => ({
  reader,
  ...(options.olderThanMs === undefined
    ? {}
    : { acceptedBefore: new Date(now.getTime() - options.olderThanMs).toISOString() }),
  ...(options.client === undefined ? {} : { owner: options.client }),
  ...modeNarrowing(options.clientMode, clientsConfig),
  ...(options.dealer === undefined ? {} : { dealer: options.dealer }),
});

/** Only sales records carry a dealer and a frame number: a case never matches --dealer or --frame. */
const kindsOf = (options: RecordsOptions) =>
  options.dealer !== undefined || options.frame !== undefined
    ? options.kinds.filter((kind) => kind === 'salesRegistration')
    : options.kinds;

/**
 * The rows the options ask for, page by page: through the `status` index per kind and state (oldest first within
 * each), or through the `frame` index for --frame (for --client, or for every client of config/clients.json),
 * reading each record found to apply the other filters (--mode by the record's own `test` there). Never a table scan.
 * Stops at --limit.
 *
 * @example
 * for await (const rows of listRecords(options, reader)) print(rows);
 */
export async function* listRecords(
  options: RecordsOptions,
  reader: TableReader,
  now = new Date(),
): AsyncGenerator<RecordRow[]> {
  let left = options.limit ?? Number.POSITIVE_INFINITY;
  const narrow = narrowing(options, reader, now);
  if (options.frame !== undefined) {
    if (kindsOf(options).length === 0) return;
    const owners = options.client === undefined ? clientsConfig.clients.map((c) => c.name) : [options.client];
    for (const owner of owners) {
      const ids = await frameRecordIds(owner, options.frame, narrow);
      const rows: RecordRow[] = [];
      for (const id of ids) {
        // A listing's row: never the personal fields (on AWS the operators' role could not read them anyway).
        const status = await readStatusRecord(id, { reader, attributes: OPERATOR_ATTRIBUTES });
        if (!status || !options.statuses.includes(status.status)) continue;
        if (options.dealer !== undefined && status.dealer !== options.dealer) continue;
        if (!ofMode(status, options.clientMode)) continue;
        rows.push(rowOf(status));
      }
      const page = rows.slice(0, left);
      left -= page.length;
      if (page.length > 0) yield page;
      if (left <= 0) return;
    }
    return;
  }
  for (const kind of kindsOf(options)) {
    for (const status of options.statuses) {
      // Large pages: fewer round trips to AWS; the read units are the same whatever the page size.
      const pageSize = Math.min(1000, left);
      for await (const entries of recordsByStatus(kind, status, { ...narrow, pageSize })) {
        const page = entries.slice(0, left).map(rowOf);
        left -= page.length;
        yield page;
        if (left <= 0) return;
      }
    }
  }
}

/**
 * Counts by state per kind (Select COUNT on each partition of the `status` index), with the options' narrowing.
 *
 * @example
 * await countRecords(options, reader) // { salesRegistration: { accepted: 2, ... }, caseRecord: { ... } }
 */
export const countRecords = async (
  options: RecordsOptions,
  reader: TableReader,
  now = new Date(),
): Promise<StateCounts> => {
  const narrow = narrowing(options, reader, now);
  const counts: StateCounts = {};
  for (const kind of kindsOf(options)) {
    const byState: Partial<Record<(typeof options.statuses)[number], number>> = {};
    for (const status of options.statuses) byState[status] = await countByStatus(kind, status, narrow);
    counts[kind] = byState;
  }
  return counts;
};
