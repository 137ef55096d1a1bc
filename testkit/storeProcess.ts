/**
 * A local store alone in its own process, for tests that kill it (tests/local/storeCrash.test.ts).
 *
 * `node testkit/storeProcess.ts <dataDir> [--no-atomic-writes] [--no-repair] [--no-whole-index-keys]` prints `{"endpoint": ...}` on
 * one line of stdout once it serves; its log lines go to stderr. SIGTERM stops it cleanly.
 */
import { startLocalStore } from '../local/localStore.ts';

const [dataDir, ...flags] = process.argv.slice(2);
if (!dataDir)
  throw new Error(
    'usage: storeProcess.ts <dataDir> [--no-atomic-writes] [--no-repair] [--no-whole-index-keys]',
  );
const store = await startLocalStore(dataDir, {
  atomicWrites: !flags.includes('--no-atomic-writes'),
  repairAfterUncleanStop: !flags.includes('--no-repair'),
  // Absent: as atomic writes, which whole index keys need.
  ...(flags.includes('--no-whole-index-keys') ? { wholeIndexKeys: false } : {}),
});
process.once('SIGTERM', () => {
  void store.close().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ endpoint: store.endpoint })}\n`);
