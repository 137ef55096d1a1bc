/** The DynamoDB-compatible store (dynalite on LevelDB), in this process, on disk, on 127.0.0.1 only. */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import dynalite from 'dynalite';

export interface LocalStoreServer {
  /** e.g. http://127.0.0.1:41235 */
  endpoint: string;
  /** The LevelDB directory: `<dataDir>/dynamodb`. */
  path: string;
  close(): Promise<void>;
}

export async function startLocalStore(dataDir: string): Promise<LocalStoreServer> {
  const path = join(dataDir, 'dynamodb');
  await mkdir(dataDir, { recursive: true });
  const lockFile = join(dataDir, 'dynamodb.pid');
  await lock(lockFile, path);
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
            await rm(lockFile, { force: true });
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await rm(lockFile, { force: true });
    throw error;
  }
}

/**
 * LevelDB allows one process per directory, and dynalite crashes the process (an unhandled stream error)
 * instead of reporting a held lock. So claim the directory first with a pid file, and fail clearly.
 */
async function lock(lockFile: string, path: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lockFile, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
    if (owner && isAlive(owner)) {
      throw new Error(
        `${path} is in use by another local stack (pid ${owner}); stop it, or set DATA_DIR to another directory`,
      );
    }
    // Stale: its process is gone (LevelDB's own lock went with it).
    await rm(lockFile, { force: true });
  }
  throw new Error(`could not lock ${path} (${lockFile})`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
