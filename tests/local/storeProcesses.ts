/**
 * The local store alone in a process of its own (testkit/storeProcess.ts), for tests that kill it or run it with a
 * patch turned off, and the records table of serverless.yml made in it as `npm start` makes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, inject } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { dynaliteDb } from '../../local/emulators/dynalite/dynaliteInternals.ts';
import { createLocalResources } from '../../local/resources.ts';

export interface StoreProcess {
  endpoint: string;
  child: ChildProcess;
  /** Its log lines so far. */
  log: string[];
  exited: Promise<unknown>;
}

/**
 * Starts testkit/storeProcess.ts on `dataDir` with `flags` and waits until it serves; `children` collects it for
 * the test file's clean-up.
 *
 * @example
 * const store = await startStore(dataDir, ['--no-repair'], children);
 */
export const startStore = async (
  dataDir: string,
  flags: string[],
  children: Set<ChildProcess>,
): Promise<StoreProcess> => {
  const script = join(import.meta.dirname, '../../testkit/storeProcess.ts');
  const child = spawn(process.execPath, [script, dataDir, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => children.delete(child));
  const log: string[] = [];
  child.stderr
    ?.setEncoding('utf8')
    .on('data', (chunk: string) => log.push(...chunk.split('\n').filter(Boolean)));
  let stdout = '';
  const endpoint = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('\n'))
        resolve((JSON.parse(stdout.split('\n')[0] as string) as { endpoint: string }).endpoint);
    });
    child.once('exit', (code) => reject(new Error(`store process exited (${code}): ${log.join('\n')}`)));
  });
  return { endpoint, child, log, exited };
};

/** A test file's store processes and data directories, killed and removed after its tests. */
export interface StoreScope {
  children: Set<ChildProcess>;
  /** A fresh data directory, removed after the file's tests. */
  dataDir(): Promise<string>;
}

/**
 * Call once at a test file's top: what its tests start and make is gone after them.
 *
 * @example
 * const scope = storeScope('dealer-gateway-crash-');
 * const store = await startStore(await scope.dataDir(), [], scope.children);
 */
export const storeScope = (prefix: string): StoreScope => {
  const dirs: string[] = [];
  const children = new Set<ChildProcess>();
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return {
    children,
    async dataDir() {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
  };
};

/** A DynamoDB client of the store that does not retry (a killed store's errors are the test's). */
export const storeClient = (endpoint: string) =>
  new DynamoDBClient({ ...localClientConfig(endpoint), maxAttempts: 1 });

/**
 * Creates the records table as `npm start` does, from serverless.yml's definition; returns its name.
 *
 * @example
 * const table = await createRecordsTable(store.endpoint);
 */
export const createRecordsTable = async (endpoint: string): Promise<string> => {
  const config = structuredClone(inject('serverlessConfig'));
  const table = config.resources?.Resources?.RecordsTable;
  if (!table) throw new Error('serverless.yml has no RecordsTable');
  const local = await createLocalResources(
    {
      ...config,
      provider: { ...config.provider, environment: {} },
      resources: { Resources: { RecordsTable: table } },
    },
    { sqs: 'http://127.0.0.1:9', dynamodb: endpoint },
  );
  return (local.tables.RecordsTable as { name: string }).name;
};

/**
 * Two record ids (32 hex digits, as the service's) to which dynalite's own index keys give the same six hash digits
 * (local/emulators/dynalite/wholeIndexKeys.ts says why that matters).
 *
 * @example
 * const [first, second] = idsDynaliteHashesAlike();
 */
export const idsDynaliteHashesAlike = (): [string, string] => {
  const db = dynaliteDb();
  const seen = new Map<string, string>();
  for (;;) {
    const id = randomBytes(16).toString('hex');
    const digits = db.hashPrefix(id, 'S');
    const other = seen.get(digits);
    if (other) return [other, id];
    seen.set(digits, id);
  }
};
