/**
 * The parts of dynalite 4.0.0 that the local store patches (atomicWrites.ts) and repairs (indexRepair.ts): its db
 * module, the store it creates, and how it lays out keys in its one LevelDB.
 *
 * These are internals, not dynalite's API, so the version gate (../versionGate.ts) refuses any other version: a new
 * dynalite must be read again (db/index.js `create`, `updateIndexes`, `getIndexActions`; actions/putItem.js,
 * updateItem.js, deleteItem.js) before its version is named there.
 */
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import dynalite from 'dynalite';
import { assertPatchedVersion } from '../versionGate.ts';

/** A DynamoDB attribute value as dynalite stores it, e.g. `{ S: 'x' }`. */
export type StoredItem = Record<string, Record<string, unknown>>;

type Callback = (error?: Error | null) => void;

export interface BatchOperation {
  type: 'put' | 'del';
  key: string;
  value?: unknown;
}

/** The main LevelDB (classic-level) with dynalite's callback wrappers. */
export interface DynaliteLevel {
  status: string;
  open(): Promise<void>;
  /** Closes once the operations under way have ended. */
  close(callback: Callback): void;
  batch(operations: BatchOperation[], callback: Callback): void;
  batch(operations: BatchOperation[]): Promise<void>;
  iterator(options: { gte: string; lt: string }): AsyncIterable<[string, unknown]>;
}

export interface SecondaryIndex {
  IndexName: string;
  KeySchema: { AttributeName: string; KeyType: string }[];
  Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
}

/** A table description as dynalite keeps it. */
export interface StoredTable {
  TableName: string;
  TableStatus?: string;
  KeySchema: { AttributeName: string; KeyType: string }[];
  LocalSecondaryIndexes?: SecondaryIndex[];
  GlobalSecondaryIndexes?: SecondaryIndex[];
}

/** A key-value view of one key prefix of the main LevelDB (dynalite's "sub db"). */
export interface DynaliteSubDb {
  put(key: string, value: unknown, callback: Callback): void;
  del(key: string, callback: Callback): void;
}

export interface DynaliteStore {
  db: DynaliteLevel;
  getItemDb(tableName: string): DynaliteSubDb;
}

export interface IndexActions {
  puts: { index: string; key: string; item: StoredItem }[];
  deletes: { index: string; key: string }[];
}

export type UpdateIndexes = (
  store: DynaliteStore,
  table: StoredTable,
  existingItem: StoredItem | null | undefined,
  item: StoredItem | null | undefined,
  callback: Callback,
) => void;

/** dynalite's db/index.js exports that are used here. */
export interface DynaliteDbModule {
  create(options: object): DynaliteStore;
  updateIndexes: UpdateIndexes;
  getIndexActions(
    indexes: SecondaryIndex[],
    existingItem: StoredItem | null | undefined,
    item: StoredItem | null | undefined,
    table: StoredTable,
  ): IndexActions;
  /** The item's key in the table, or with `keySchema` (an index's), its key values in that schema. */
  createKey(item: StoredItem, table: StoredTable, keySchema?: SecondaryIndex['KeySchema']): string;
  /** Six hex digits of an MD5 of a key value: where dynalite puts an item in the table, and (unpatched) ties apart in an index. */
  hashPrefix(hashKey: string, hashType: string): string;
  /** An index entry's LevelDB key (below its index's prefix); also how a query on an index pages. */
  createIndexKey(item: StoredItem, table: StoredTable, keySchema: SecondaryIndex['KeySchema']): string;
}

export type IndexType = 'Local' | 'Global';
export const indexTypes: readonly IndexType[] = ['Local', 'Global'];

/** Where dynalite keeps table descriptions: `table~<TableName>`. */
export const tablePrefix = 'table~';
/** Where dynalite keeps a table's items: `item-<TableName>~<key>`. */
export const itemPrefix = (tableName: string) => `item-${tableName}~`;
/** Where dynalite keeps an index's entries: `index-global~<TableName>~<IndexName>~<index key>`. */
export const indexPrefix = (indexType: IndexType, tableName: string, indexName: string) =>
  `index-${indexType.toLowerCase()}~${tableName}~${indexName}~`;

/** Iterator bounds for every key that starts with `prefix` (all of dynalite's prefixes end with `~`). */
export const prefixRange = (prefix: string) => ({
  gte: prefix,
  lt: `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}`,
});

let loaded: DynaliteDbModule | undefined;

/**
 * dynalite's db module, the very instance dynalite's actions use; throws on an unsupported dynalite version.
 *
 * @example
 * const db = dynaliteDb();
 * db.createKey({ pk: { S: 'a' } }, table);
 */
export function dynaliteDb(): DynaliteDbModule {
  if (loaded) return loaded;
  // The exact version these internals were read in (local/emulators/versionGate.ts).
  assertPatchedVersion('dynalite');
  const require = createRequire(import.meta.url);
  const entry = require.resolve('dynalite');
  const db = require(join(dirname(entry), 'db', 'index.js')) as DynaliteDbModule;
  for (const name of ['create', 'updateIndexes', 'getIndexActions', 'createKey', 'createIndexKey'] as const) {
    if (typeof db[name] !== 'function') throw new Error(`dynalite has no db.${name}`);
  }
  loaded = db;
  return db;
}

/**
 * Creates a dynalite server and returns the store it serves, which dynalite does not expose.
 *
 * @example
 * const { server, store } = createDynalite({ path: '/tmp/x/dynamodb' });
 */
export function createDynalite(options: Parameters<typeof dynalite>[0]): {
  server: Server;
  store: DynaliteStore;
} {
  const db = dynaliteDb();
  const create = db.create;
  let store: DynaliteStore | undefined;
  // dynalite() calls db.create synchronously, once: catch the store on its way.
  db.create = (storeOptions) => {
    store = create(storeOptions);
    return store;
  };
  try {
    const server = dynalite(options);
    if (!store) throw new Error('dynalite created no store');
    return { server, store };
  } finally {
    db.create = create;
  }
}
