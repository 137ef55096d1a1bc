/**
 * Gives every item an index entry of its own, however many items share the index's key values.
 *
 * dynalite 4 keys an index entry by the index's key values followed by only six hex digits (24 bits) of an MD5 of
 * the item's table key (`createIndexKey`: "for now just first six chars"). Two items with the same index key values
 * whose digits agree share one LevelDB key: the later write replaces the earlier item's entry (a query finds one of
 * the two), and taking either item out of the index takes both out. The records settled by one downstream call
 * share their `eventsDueAt` and `purgeAt` to the millisecond; among a few thousand of them such a pair turns up
 * about once in a hundred long runs, and then a record with its outbox full is missing from the `events` index (its
 * events never published), or one whose personal data is due is missing from the `purge` index. A DynamoDB index
 * holds every item.
 *
 * The replacement key is the index's key values followed by the item's whole table key (dynalite's own `createKey`
 * of the table: its six hash digits, then the key itself), which no other item has. Ties keep their place in a
 * query's range: after the index's key values come hex digits first, as before. Queries page on the same key
 * (`createIndexKey` is what `query` and `scan` build an `ExclusiveStartKey` with).
 *
 * Entries written with dynalite's own keys are not found by these; local/localStore.ts rebuilds the indexes of a
 * data directory written before (indexRepair.ts).
 */
import type { DynaliteDbModule, SecondaryIndex } from './dynaliteInternals.ts';
import { dynaliteDb } from './dynaliteInternals.ts';

/** What local/localStore.ts writes beside a data directory whose index entries have these keys. */
export const WHOLE_INDEX_KEYS_FORMAT = 'index keys: index key values, then the whole table key';

const installed = new WeakSet<DynaliteDbModule>();

/**
 * Replaces dynalite's `db.createIndexKey` and `db.getIndexActions` with versions whose index keys are unique per
 * item. Idempotent. Throws on a dynalite version whose internals are not known (see dynaliteInternals.ts).
 *
 * @example
 * installWholeIndexKeys();
 * const { server } = createDynalite({ path });
 */
export function installWholeIndexKeys(db: DynaliteDbModule = dynaliteDb()): void {
  if (installed.has(db)) return;
  installed.add(db);
  const { createKey, getIndexActions } = db;
  db.createIndexKey = (item, table, keySchema) =>
    `${createKey(item, table, keySchema)}${createKey(item, table)}`;
  // dynalite's own actions, with each key made again: the same entries, and the same decisions (an entry is
  // deleted when the item's index key values changed, and for one item the two keys change together).
  db.getIndexActions = (indexes, existingItem, item, table) => {
    const actions = getIndexActions(indexes, existingItem, item, table);
    const schemaOf = (name: string): SecondaryIndex['KeySchema'] => {
      const index = indexes.find((candidate) => candidate.IndexName === name);
      if (!index) throw new Error(`dynalite named an index it was not given: ${name}`);
      return index.KeySchema;
    };
    return {
      puts: actions.puts.map((put) => ({
        ...put,
        key: db.createIndexKey(put.item, table, schemaOf(put.index)),
      })),
      deletes: actions.deletes.map((del) => {
        if (!existingItem) throw new Error('dynalite deleted an index entry of no item');
        return { ...del, key: db.createIndexKey(existingItem, table, schemaOf(del.index)) };
      }),
    };
  };
}
