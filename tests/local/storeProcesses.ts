/**
 * The local store alone in a process of its own (testkit/storeProcess.ts), for tests that kill it or run it with a
 * patch turned off, and the records table of serverless.yml made in it as `npm start` makes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
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
