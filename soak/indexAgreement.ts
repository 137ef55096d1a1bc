/**
 * Whether the store's indexes agree with its items at the end of a run: every record due for queueing, publishing
 * or removal of personal data must be in the index the reconciler looks in, and no index may name what is not so.
 * A record missing from the `events` index loses its events without a trace in any answer; a run checks it
 * directly, from the data directory once `npm start` has stopped, with the local store's own patches, writing
 * nothing.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDynalite } from '../local/emulators/dynalite/dynaliteInternals.ts';
import { type IndexRepairReport, repairIndexes } from '../local/emulators/dynalite/indexRepair.ts';
import { installWholeIndexKeys } from '../local/emulators/dynalite/wholeIndexKeys.ts';

/** Index entries that disagree with the items: missing, naming no such item, or projecting it wrongly. */
export interface IndexAgreement {
  items: number;
  /** Entries of items that do not exist or do not belong in that index. */
  extra: number;
  /** Entries an item should have and has not. */
  missing: number;
  /** Entries whose projection differs from the item. */
  wrong: number;
  /** Why the store could not be read (no verdict then: the run is red). */
  unreadable?: string;
}

/**
 * Reads the stopped store on `dataDir` and counts index entries that disagree with its items.
 *
 * @throws when `dataDir` holds no store.
 * @example
 * await service.stop();
 * const { missing } = await indexAgreement(dataDir); // 0 when every record is where the reconciler looks
 */
export const indexAgreement = async (
  dataDir: string,
  { lockWaits = LOCK_WAITS }: { lockWaits?: number } = {},
): Promise<IndexAgreement> => {
  const path = join(dataDir, 'dynamodb');
  // LevelDB would make an empty store where none is, and an empty store agrees with itself.
  if (!(await stat(path).catch(() => undefined))?.isDirectory()) throw new Error(`no store in ${dataDir}`);
  // The keys npm start's store writes (local/localStore.ts); without them every entry would look wrong.
  installWholeIndexKeys();
  // The store's process may still hold LevelDB's lock for a moment after npm start has stopped (a run at load 13
  // found it so): its lock, not a time, says when the store is ours alone to read.
  for (let attempt = 1; ; attempt++) {
    try {
      return await readAgreement(path);
    } catch (error) {
      if (attempt >= lockWaits || !/failed to open|lock/i.test(String(error))) throw error;
      await sleep(1000);
    }
  }
};

/** Seconds the reading waits, a second at a time, for the store's process to let go of its lock. */
const LOCK_WAITS = 30;

const readAgreement = async (path: string): Promise<IndexAgreement> => {
  const { store } = createDynalite({ path });
  try {
    const report: IndexRepairReport = await repairIndexes(store, { write: false });
    return { items: report.items, extra: report.removed, missing: report.added, wrong: report.fixed };
  } finally {
    // A store that never opened has nothing to close: the open's error is the one to tell.
    await new Promise<void>((resolve) => store.db.close(() => resolve()));
  }
};

/** The run's verdict on it: every index agrees with the items. */
export const indexesAgree = (agreement: IndexAgreement): boolean =>
  agreement.unreadable === undefined && agreement.extra + agreement.missing + agreement.wrong === 0;
