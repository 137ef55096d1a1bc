/**
 * The repair of a data directory's indexes after an unclean stop (local/emulators/dynalite/indexRepair.ts), on a real
 * dynalite store holding the records table of serverless.yml, with disagreements planted in its LevelDB.
 */

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type DynaliteStore,
  dynaliteDb,
  indexPrefix,
  prefixRange,
  type StoredItem,
  type StoredTable,
  tablePrefix,
} from '../../local/emulators/dynalite/dynaliteInternals.ts';
import { repairIndexes } from '../../local/emulators/dynalite/indexRepair.ts';
import { startLocalStore } from '../../local/localStore.ts';
import { recordsTableStore } from './recordsTableStore.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const s = (value: string): AttributeValue => ({ S: value });

/** A dynalite store on a fresh directory with the records table and three records, listening. */
const seededStore = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-repair-'));
  dirs.push(dataDir);
  const { server, store, dynamodb, tableName } = await recordsTableStore(dataDir);
  const record = (pk: string, status: string, extra: Record<string, AttributeValue> = {}) =>
    dynamodb.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: s(pk),
          id: s(pk),
          kind: s('sale'),
          status: s(status),
          statusKey: s(`sale#${status}`),
          acceptedAt: s('2026-11-27T03:00:00.000Z'),
          ...extra,
        },
      }),
    );
  await record('accepted-1', 'accepted', { openKind: s('sale'), dueAt: s('2026-11-27T03:05:00.000Z') });
  await record('delivered-1', 'delivered');
  await record('delivered-2', 'delivered', { frameKey: s('dealer#F1') });
  let table: StoredTable | undefined;
  for await (const [, value] of store.db.iterator(prefixRange(tablePrefix))) table = value as StoredTable;
  if (!table) throw new Error('no table stored');
  return { dataDir, server, store, dynamodb, tableName, table };
};

/** Every [key, value] of the store's LevelDB under `prefix`. */
const entries = async (store: DynaliteStore, prefix: string) => {
  const found: [string, unknown][] = [];
  for await (const entry of store.db.iterator(prefixRange(prefix))) found.push(entry);
  return found;
};

/** Plants what a kill between dynalite's separate writes leaves: a lost, an orphan and a stale index entry. */
const plantDisagreements = async (store: DynaliteStore, table: StoredTable) => {
  const db = dynaliteDb();
  const openPrefix = indexPrefix('Global', table.TableName, 'open');
  const statusPrefix = indexPrefix('Global', table.TableName, 'status');
  const [[openKey]] = await entries(store, openPrefix);
  const ghost: StoredItem = {
    pk: { S: 'never-written' },
    statusKey: { S: 'sale#accepted' },
    acceptedAt: { S: '2026-11-27T03:00:00.000Z' },
  };
  const [ghostEntry] = db
    .getIndexActions(table.GlobalSecondaryIndexes ?? [], null, ghost, table)
    .puts.filter(({ index }) => index === 'status');
  const stale = (await entries(store, statusPrefix)).find(
    ([, value]) => (value as { pk: AttributeValue }).pk.S === 'delivered-1',
  );
  if (!openKey || !ghostEntry || !stale) throw new Error('nothing to plant on');
  await store.db.batch([
    { type: 'del', key: openKey },
    { type: 'put', key: `${statusPrefix}${ghostEntry.key}`, value: ghostEntry.item },
    { type: 'put', key: stale[0], value: { ...(stale[1] as object), status: s('accepted') } },
  ]);
};

const query = async (
  dynamodb: DynamoDBClient,
  tableName: string,
  index: string,
  key: string,
  value: string,
) =>
  (
    await dynamodb.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index,
        KeyConditionExpression: '#k = :v',
        ExpressionAttributeNames: { '#k': key },
        ExpressionAttributeValues: { ':v': s(value) },
      }),
    )
  ).Items ?? [];

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('the repair of the local store indexes after an unclean stop', () => {
  it('removes entries of items that do not exist, adds the missing ones and fixes the wrong ones', async () => {
    // Prepare
    const { server, store, dynamodb, tableName, table } = await seededStore();
    await plantDisagreements(store, table);

    // Act
    const report = await repairIndexes(store);
    const again = await repairIndexes(store);

    // Assess
    expect(report).toEqual({ tables: 1, items: 3, removed: 1, added: 1, fixed: 1 });
    expect(again).toEqual({ tables: 1, items: 3, removed: 0, added: 0, fixed: 0 });
    expect((await query(dynamodb, tableName, 'open', 'openKind', 'sale')).map((i) => i.pk?.S)).toEqual([
      'accepted-1',
    ]);
    expect(
      (await query(dynamodb, tableName, 'status', 'statusKey', 'sale#accepted')).map((i) => i.pk?.S),
    ).toEqual(['accepted-1']);
    const delivered = await query(dynamodb, tableName, 'status', 'statusKey', 'sale#delivered');
    expect(delivered.map((i) => [i.pk?.S, i.status?.S]).sort()).toEqual([
      ['delivered-1', 'delivered'],
      ['delivered-2', 'delivered'],
    ]);
    dynamodb.destroy();
    await close(server);
  });

  it('runs when the store takes over from a stack that died, before serving, and not after a clean stop', async () => {
    // Prepare
    const { dataDir, server, store, dynamodb, table } = await seededStore();
    await plantDisagreements(store, table);
    dynamodb.destroy();
    await close(server);
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid as number;
    await writeFile(join(dataDir, 'dynamodb.pid'), `${JSON.stringify({ pid: deadPid })}\n`);
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);

    // Act
    const afterDeath = await startLocalStore(dataDir, { log });
    await afterDeath.close();
    const afterDeathLines = lines.splice(0);
    const afterCleanStop = await startLocalStore(dataDir, { log });
    await afterCleanStop.close();

    // Assess
    expect(afterDeathLines).toEqual([
      expect.stringContaining('was held by a local stack that is gone'),
      expect.stringMatching(
        /^checked the indexes of 3 items after an unclean stop in \d+ ms: removed 1, added 1, fixed 1 index entries$/,
      ),
    ]);
    expect(lines).toEqual([]);
  });
});
