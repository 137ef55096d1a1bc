/**
 * The local tables are ready when `createLocalResources` returns, as CloudFormation's are when it reports them
 * created: dynalite answers CreateTable with CREATING and refuses writes to the table (ResourceNotFoundException)
 * until it turns ACTIVE, which on a busy machine came after a test's first write. Here dynalite takes 300 ms to
 * create a table, so the write right after would be refused if nothing waited.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { createDynalite } from '../../local/emulators/dynalite/dynaliteInternals.ts';
import { createLocalResources } from '../../local/resources.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the local tables', () => {
  it('are ACTIVE and take a write as soon as createLocalResources returns, however slowly dynalite creates them', async () => {
    // Prepare: a fresh store whose table creation takes 300 ms.
    const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-tables-'));
    dirs.push(dataDir);
    const { server } = createDynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 300 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const endpoint = `http://127.0.0.1:${address.port}`;
    const config = structuredClone(inject('serverlessConfig'));
    const RecordsTable = config.resources?.Resources?.RecordsTable;
    if (!RecordsTable) throw new Error('serverless.yml has no RecordsTable');
    const dynamodb = new DynamoDBClient(localClientConfig(endpoint));
    try {
      // Act
      const { tables } = await createLocalResources(
        {
          ...config,
          provider: { ...config.provider, environment: {} },
          resources: { Resources: { RecordsTable } },
        },
        { sqs: 'http://127.0.0.1:9', dynamodb: endpoint },
      );
      const TableName = (tables.RecordsTable as { name: string }).name;
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName }));
      const write = dynamodb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'first-write' } } }));
      // Assess
      expect(Table?.TableStatus).toBe('ACTIVE');
      await expect(write).resolves.toBeDefined();
    } finally {
      dynamodb.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
