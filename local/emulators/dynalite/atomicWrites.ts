/**
 * Makes dynalite write an item and its secondary-index entries in one LevelDB batch.
 *
 * dynalite 4's PutItem, UpdateItem and DeleteItem (and BatchWriteItem, which runs them per item) call
 * `db.updateIndexes`, which deletes and puts the index entries as separate LevelDB writes, and only then put or
 * delete the item. A process killed in between leaves indexes that disagree with the item: a record `accepted`
 * in the table with no entry in the `open` index is never queued again. On AWS an item write is whole.
 *
 * The replacement `updateIndexes` writes the index changes and the item itself in one batch (LevelDB applies a
 * batch whole or not at all, also across a crash), while the action still holds its per-item lock. The action's
 * own item write that follows is then a repeat of what is stored, and is skipped.
 */
import {
  type BatchOperation,
  type DynaliteDbModule,
  type DynaliteSubDb,
  dynaliteDb,
  type IndexType,
  indexPrefix,
  indexTypes,
  itemPrefix,
  type StoredItem,
  type StoredTable,
} from './dynaliteInternals.ts';

/** Marks an item delete that the batch already made. */
const deleted = Symbol('deleted');

/** Per item sub db: item key -> the value the batch wrote (or `deleted`), for the action's repeat to skip. */
const written = new WeakMap<DynaliteSubDb, Map<string, StoredItem | typeof deleted>>();

const installed = new WeakSet<DynaliteDbModule>();

/**
 * Replaces dynalite's `db.updateIndexes` with a version that writes the item and its index entries atomically.
 * Idempotent. Throws on a dynalite version whose internals are not known (see dynaliteInternals.ts).
 *
 * @example
 * installAtomicWrites();
 * const { server } = createDynalite({ path });
 */
export function installAtomicWrites(db: DynaliteDbModule = dynaliteDb()): void {
  if (installed.has(db)) return;
  installed.add(db);
  db.updateIndexes = function updateIndexesWithItem(store, table, existingItem, item, callback) {
    const current = item ?? existingItem;
    if (!current) {
      callback();
      return;
    }
    const key = db.createKey(current, table);
    const operations: BatchOperation[] = indexOperations(db, table, existingItem, item);
    operations.push(
      item
        ? { type: 'put', key: `${itemPrefix(table.TableName)}${key}`, value: item }
        : { type: 'del', key: `${itemPrefix(table.TableName)}${key}` },
    );
    store.db.batch(operations, (error) => {
      if (error) {
        callback(error);
        return;
      }
      writtenBy(store.getItemDb(table.TableName)).set(key, item ?? deleted);
      callback();
    });
  };
}

/** dynalite's own index changes for one item, as batch operations on the main LevelDB. */
function indexOperations(
  db: DynaliteDbModule,
  table: StoredTable,
  existingItem: StoredItem | null | undefined,
  item: StoredItem | null | undefined,
): BatchOperation[] {
  const deletes: BatchOperation[] = [];
  const puts: BatchOperation[] = [];
  for (const indexType of indexTypes) {
    const indexes = table[`${indexType}SecondaryIndexes` as `${IndexType}SecondaryIndexes`] ?? [];
    if (indexes.length === 0) continue;
    const actions = db.getIndexActions(indexes, existingItem, item, table);
    for (const { index, key } of actions.deletes) {
      deletes.push({ type: 'del', key: `${indexPrefix(indexType, table.TableName, index)}${key}` });
    }
    for (const { index, key, item: entry } of actions.puts) {
      puts.push({
        type: 'put',
        key: `${indexPrefix(indexType, table.TableName, index)}${key}`,
        value: entry,
      });
    }
  }
  // Deletes first, as dynalite orders them (they never touch the key a put writes).
  return [...deletes, ...puts];
}

/** The writes the batch made for an item sub db; on first use, makes its put/del skip their repeat. */
function writtenBy(itemDb: DynaliteSubDb): Map<string, StoredItem | typeof deleted> {
  let writes = written.get(itemDb);
  if (writes) return writes;
  const entries = new Map<string, StoredItem | typeof deleted>();
  writes = entries;
  written.set(itemDb, entries);
  const put = itemDb.put.bind(itemDb);
  const del = itemDb.del.bind(itemDb);
  itemDb.put = (key, value, callback) => {
    if (entries.get(key) === value) {
      entries.delete(key);
      setImmediate(callback, null);
      return;
    }
    put(key, value, callback);
  };
  itemDb.del = (key, callback) => {
    if (entries.get(key) === deleted) {
      entries.delete(key);
      setImmediate(callback, null);
      return;
    }
    del(key, callback);
  };
  return writes;
}
