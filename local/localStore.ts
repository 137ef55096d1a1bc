/** The DynamoDB-compatible store (dynalite on LevelDB), in this process, on disk, on 127.0.0.1 only. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type LockOptions, lockDataDir } from './dataDirLock.ts';
import { installAtomicWrites } from './emulators/dynalite/atomicWrites.ts';
import { createDynalite } from './emulators/dynalite/dynaliteInternals.ts';
import { type IndexRepairReport, repairIndexes } from './emulators/dynalite/indexRepair.ts';
import { installWholeIndexKeys, WHOLE_INDEX_KEYS_FORMAT } from './emulators/dynalite/wholeIndexKeys.ts';

export interface LocalStoreServer {
  /** e.g. http://127.0.0.1:41235 */
  endpoint: string;
  /** The LevelDB directory: `<dataDir>/dynamodb`. */
  path: string;
  /** Tells a stack starting on the same directory that this one is stopping: it waits rather than refuse. */
  markStopping(): Promise<void>;
  close(): Promise<void>;
}

export interface LocalStoreOptions extends LockOptions {
  /** Called once the data directory is this process's (see dataDirLock.ts), before dynalite opens it. */
  onLocked?: () => void;
  /**
   * Write each item and its index entries in one LevelDB batch (atomicWrites.ts). Default true; false only to show
   * what a kill does without it (tests/local/storeCrash.test.ts).
   */
  atomicWrites?: boolean;
  /**
   * After taking the directory over from a stack that died, make every index agree with the items before serving
   * (indexRepair.ts). Default true; false only in tests, as above.
   */
  repairAfterUncleanStop?: boolean;
  /**
   * Give every item an entry of its own in each index (wholeIndexKeys.ts). Default: as `atomicWrites`, which it
   * needs; false only to show what dynalite's own index keys lose (tests/local/wholeIndexKeys.test.ts), on a
   * directory of its own.
   */
  wholeIndexKeys?: boolean;
}

/** Beside the LevelDB directory: the format of its index keys, so that a directory written before is rebuilt. */
const INDEX_KEYS_FILE = 'dynamodb.index-keys';

const reportLine = (report: IndexRepairReport): string => {
  const changed = report.removed + report.added + report.fixed;
  return changed === 0
    ? 'all agree'
    : `removed ${report.removed}, added ${report.added}, fixed ${report.fixed} index entries`;
};

/**
 * Claims `<dataDir>/dynamodb` (lock file `<dataDir>/dynamodb.pid`), waiting for a stack that is stopping or
 * dying there, then serves it: crash-consistent (an item and its index entries are written together), and after
 * a stack that died there, with its indexes checked against the items first.
 *
 * @example
 * const store = await startLocalStore('.data');
 * // ... DynamoDB clients on store.endpoint ...
 * await store.close();
 */
export async function startLocalStore(
  dataDir: string,
  options: LocalStoreOptions = {},
): Promise<LocalStoreServer> {
  const path = join(dataDir, 'dynamodb');
  await mkdir(dataDir, { recursive: true });
  const lock = await lockDataDir(join(dataDir, 'dynamodb.pid'), path, options);
  options.onLocked?.();
  const log = options.log ?? ((line: string) => process.stderr.write(`[local] ${line}\n`));
  try {
    const atomicWrites = options.atomicWrites ?? true;
    if (atomicWrites) installAtomicWrites();
    // Writes reach the whole keys through atomicWrites.ts's updateIndexes; dynalite's own makes its keys itself.
    const wholeIndexKeys = options.wholeIndexKeys ?? atomicWrites;
    if (wholeIndexKeys && !atomicWrites)
      throw new Error('whole index keys need atomic writes: without them dynalite writes its own index keys');
    if (wholeIndexKeys) installWholeIndexKeys();
    const keysFile = join(dataDir, INDEX_KEYS_FILE);
    const olderKeys =
      wholeIndexKeys && (await readFile(keysFile, 'utf8').catch(() => '')) !== WHOLE_INDEX_KEYS_FORMAT;
    const { server, store } = createDynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    const afterDeath = lock.previousHolderDied && (options.repairAfterUncleanStop ?? true);
    if (afterDeath || olderKeys) {
      const started = performance.now();
      const report = await repairIndexes(store).catch(async (error: unknown) => {
        await new Promise((resolve) => server.close(resolve));
        throw error;
      });
      const took = `${report.items} items ${afterDeath ? 'after an unclean stop' : 'written with older index keys'} in ${Math.round(performance.now() - started)} ms`;
      if (afterDeath || report.items > 0) log(`checked the indexes of ${took}: ${reportLine(report)}`);
      if (olderKeys) await writeFile(keysFile, WHOLE_INDEX_KEYS_FORMAT);
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('dynalite did not report its port');
    let closing: Promise<void> | undefined;
    return {
      endpoint: `http://127.0.0.1:${address.port}`,
      path,
      markStopping: () => lock.markStopping(),
      close() {
        closing ??= (async () => {
          // dynalite's close() stops the HTTP server, then closes LevelDB once pending operations finish.
          const closed = new Promise<void>((resolve, reject) =>
            server.close((error) => (error ? reject(error) : resolve())),
          );
          server.closeAllConnections();
          try {
            await closed;
          } finally {
            await lock.release();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
