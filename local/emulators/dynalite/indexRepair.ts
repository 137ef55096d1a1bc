/**
 * Rebuilds dynalite's secondary indexes from the items, changing only what disagrees.
 *
 * Run on a data directory whose previous stack died without a clean stop (dataDirLock.ts reports it), before the
 * store serves: a store killed by an earlier version of atomicWrites.ts, or by a dynalite without it, may hold
 * index entries of items that were never written and lack entries of items that were. A clean stop skips it.
 */
import {
  type BatchOperation,
  type DynaliteDbModule,
  type DynaliteStore,
  dynaliteDb,
  type IndexType,
  indexPrefix,
  indexTypes,
  itemPrefix,
  prefixRange,
  type StoredItem,
  type StoredTable,
  tablePrefix,
} from './dynaliteInternals.ts';

export interface IndexRepairReport {
  tables: number;
  items: number;
  /** Index entries whose item does not exist, or no longer belongs in that index: deleted. */
  removed: number;
  /** Index entries an item should have and did not: written. */
  added: number;
  /** Index entries whose projection disagreed with their item: rewritten. */
  fixed: number;
}

/** Operations per LevelDB batch: bounds the memory of one write. */
const batchSize = 500;

export interface IndexRepairOptions {
  /** Make the changes (default true); false only counts what disagrees, writing nothing (a check). */
  write?: boolean;
}

/**
 * Makes every secondary index of every table of `store` agree with the table's items.
 *
 * @example
 * const report = await repairIndexes(store);
 * if (report.removed + report.added + report.fixed > 0) log(`repaired ${JSON.stringify(report)}`);
 */
export async function repairIndexes(
  store: DynaliteStore,
  options: IndexRepairOptions = {},
  db: DynaliteDbModule = dynaliteDb(),
): Promise<IndexRepairReport> {
  if (store.db.status !== 'open') await store.db.open();
  const report: IndexRepairReport = { tables: 0, items: 0, removed: 0, added: 0, fixed: 0 };
  const tables: StoredTable[] = [];
  for await (const [, table] of store.db.iterator(prefixRange(tablePrefix)))
    tables.push(table as StoredTable);
  for (const table of tables) {
    report.tables += 1;
    const indexes = indexTypes.flatMap((indexType) =>
      (table[`${indexType}SecondaryIndexes` as `${IndexType}SecondaryIndexes`] ?? []).map((index) => ({
        indexType,
        index,
      })),
    );
    if (indexes.length === 0) continue;
    // What every index should hold, from the items: full LevelDB key -> the projections that may be there. One
    // with whole index keys (wholeIndexKeys.ts); more only under dynalite's own keys, where items collide (their
    // index key values plus 24 bits of a hash of the table key) and one entry shadows the other.
    const expected = new Map<string, StoredItem[]>();
    for await (const [, value] of store.db.iterator(prefixRange(itemPrefix(table.TableName)))) {
      report.items += 1;
      const item = value as StoredItem;
      for (const indexType of indexTypes) {
        const ofType = table[`${indexType}SecondaryIndexes` as `${IndexType}SecondaryIndexes`] ?? [];
        if (ofType.length === 0) continue;
        for (const put of db.getIndexActions(ofType, null, item, table).puts) {
          const key = `${indexPrefix(indexType, table.TableName, put.index)}${put.key}`;
          expected.set(key, [...(expected.get(key) ?? []), put.item]);
        }
      }
    }
    const operations: BatchOperation[] = [];
    for (const { indexType, index } of indexes) {
      for await (const [key, value] of store.db.iterator(
        prefixRange(indexPrefix(indexType, table.TableName, index.IndexName)),
      )) {
        const candidates = expected.get(key);
        if (candidates === undefined) {
          report.removed += 1;
          operations.push({ type: 'del', key });
          continue;
        }
        expected.delete(key);
        const stored = JSON.stringify(value);
        if (!candidates.some((candidate) => JSON.stringify(candidate) === stored)) {
          report.fixed += 1;
          operations.push({ type: 'put', key, value: candidates.at(-1) });
        }
      }
    }
    for (const [key, candidates] of expected) {
      report.added += 1;
      operations.push({ type: 'put', key, value: candidates.at(-1) });
    }
    if (options.write === false) continue;
    for (let start = 0; start < operations.length; start += batchSize) {
      await store.db.batch(operations.slice(start, start + batchSize));
    }
  }
  return report;
}
