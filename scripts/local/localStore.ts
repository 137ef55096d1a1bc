/** The DynamoDB-compatible store (dynalite on LevelDB), in this process, on disk, on 127.0.0.1 only. */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import dynalite from 'dynalite';
import { type LockOptions, lockDataDir } from './dataDirLock.ts';

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
}

/**
 * Claims `<dataDir>/dynamodb` (lock file `<dataDir>/dynamodb.pid`), waiting for a stack that is stopping or
 * dying there, then serves it.
 */
export async function startLocalStore(
  dataDir: string,
  options: LocalStoreOptions = {},
): Promise<LocalStoreServer> {
  const path = join(dataDir, 'dynamodb');
  await mkdir(dataDir, { recursive: true });
  const lock = await lockDataDir(join(dataDir, 'dynamodb.pid'), path, options);
  options.onLocked?.();
  try {
    const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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
