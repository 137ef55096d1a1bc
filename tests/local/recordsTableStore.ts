/**
 * A dynalite store of its own on `dataDir`, listening on a free port, with the records table of serverless.yml
 * made by the local runner's own `createLocalResources`: for tests of the local store itself. With the patches
 * `npm start`'s store has (atomic writes, whole index keys), whichever test ran in this process before.
 */
import type { Server } from 'node:http';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { installAtomicWrites } from '../../local/emulators/dynalite/atomicWrites.ts';
import { createDynalite, type DynaliteStore } from '../../local/emulators/dynalite/dynaliteInternals.ts';
import { installWholeIndexKeys } from '../../local/emulators/dynalite/wholeIndexKeys.ts';
import { createLocalResources } from '../../local/resources.ts';

export interface RecordsTableStore {
  server: Server;
  store: DynaliteStore;
  dynamodb: DynamoDBClient;
  tableName: string;
}

/**
 * Starts the store and makes the records table (`createTableMs`: how long dynalite takes to make a table).
 *
 * @example
 * const { server, dynamodb, tableName } = await recordsTableStore(dataDir);
 */
export const recordsTableStore = async (
  dataDir: string,
  options: { createTableMs?: number } = {},
): Promise<RecordsTableStore> => {
  installAtomicWrites();
  installWholeIndexKeys();
  const { server, store } = createDynalite({
    path: join(dataDir, 'dynamodb'),
    createTableMs: options.createTableMs ?? 0,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  const config = structuredClone(inject('serverlessConfig'));
  const RecordsTable = config.resources?.Resources?.RecordsTable;
  if (!RecordsTable) throw new Error('serverless.yml has no RecordsTable');
  const { tables } = await createLocalResources(
    {
      ...config,
      provider: { ...config.provider, environment: {} },
      resources: { Resources: { RecordsTable } },
    },
    { sqs: 'http://127.0.0.1:9', dynamodb: endpoint },
  );
  const tableName = (tables.RecordsTable as { name: string }).name;
  return { server, store, dynamodb: new DynamoDBClient(localClientConfig(endpoint)), tableName };
};
