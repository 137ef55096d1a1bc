/** Where the project lives and how to run its local tools, independent of the caller's cwd and PATH. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const binDir = join(projectRoot, 'node_modules', '.bin');
/** The osls CLI script; run it with `process.execPath` so it uses this Node (24), whatever PATH says. */
export const oslsScript = join(projectRoot, 'node_modules', 'osls', 'bin', 'serverless.js');
/** The stage the local runner resolves serverless.yml with (`${sls:stage}` in resource names). */
export const localStage = 'local';
/** The region every local SDK client and the handlers use. */
export const localRegion = 'eu-west-1';

/** Data directory: `DATA_DIR` if set, else `<project>/.data` (gitignored). */
export function defaultDataDir(): string {
  return process.env.DATA_DIR ? resolve(process.env.DATA_DIR) : join(projectRoot, '.data');
}
