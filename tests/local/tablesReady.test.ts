/**
 * The local tables are ready when `createLocalResources` returns, as CloudFormation's are when it reports them
 * created: dynalite answers CreateTable with CREATING and refuses writes to the table (ResourceNotFoundException)
 * until it turns ACTIVE, which on a busy machine came after a test's first write. Here dynalite takes 300 ms to
 * create a table, so the write right after would be refused if nothing waited.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { recordsTableStore } from './recordsTableStore.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the local tables', () => {
  it('are ACTIVE and take a write as soon as createLocalResources returns, however slowly dynalite creates them', async () => {
    // Prepare: a fresh directory; dynalite will take 300 ms to make a table.
    const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-tables-'));
    dirs.push(dataDir);
    // Act: the store started and the records table made by createLocalResources.
    const {
      server,
      dynamodb,
      tableName: TableName,
    } = await recordsTableStore(dataDir, { createTableMs: 300 });
    try {
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
