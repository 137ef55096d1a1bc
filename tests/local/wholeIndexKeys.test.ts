/**
 * Index entries of their own for items with equal index key values (local/emulators/dynalite/wholeIndexKeys.ts), on
 * the store in a process of its own with the records table of serverless.yml: two records settled by one call (the
 * same `eventsDueAt` and `purgeAt`) whose ids dynalite's own index key cannot tell apart.
 *
 * Controls: the same writes on a store with dynalite's own index keys (`--no-whole-index-keys`) lose a record from
 * the index; a directory written with those keys and then marked current (not rebuilt) keeps a removed entry.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AttributeValue,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { WHOLE_INDEX_KEYS_FORMAT } from '../../local/emulators/dynalite/wholeIndexKeys.ts';
import { startLocalStore } from '../../local/localStore.ts';
import {
  createRecordsTable,
  idsDynaliteHashesAlike,
  type StoreProcess,
  startStore,
  storeClient,
  storeScope,
} from './storeProcesses.ts';

const { children, dataDir: newDataDir } = storeScope('dealer-gateway-index-keys-');

const s = (value: string): AttributeValue => ({ S: value });
const SETTLED_AT = '2026-11-28T10:12:35.247Z';

/** A delivered sale whose outbox and personal data are due, as a call's outcome leaves it. */
const settledSale = (id: string) =>
  new PutItemCommand({
    TableName: '',
    Item: {
      pk: s(id),
      id: s(id),
      kind: s('salesRegistration'),
      status: s('delivered'),
      eventsKind: s('salesRegistration'),
      eventsDueAt: s(SETTLED_AT),
      purgeKind: s('salesRegistration'),
      purgeAt: s('2027-02-26T10:11:35.247Z'),
    },
  });

/** The ids in a due index, read `pageSize` a page as the reconciler reads them. */
const idsIn = async (dynamodb: DynamoDBClient, table: string, index: 'events' | 'purge', pageSize = 100) => {
  const [kind, due] = index === 'events' ? ['eventsKind', 'eventsDueAt'] : ['purgeKind', 'purgeAt'];
  const ids: string[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new QueryCommand({
        TableName: table,
        IndexName: index,
        KeyConditionExpression: `${kind} = :kind AND ${due} <= :due`,
        ExpressionAttributeValues: { ':kind': s('salesRegistration'), ':due': s('2099-01-01') },
        Limit: pageSize,
        ExclusiveStartKey: start,
      }),
    );
    ids.push(...(page.Items ?? []).map((item) => item.pk?.S ?? ''));
    start = page.LastEvaluatedKey;
  } while (start);
  return ids.sort();
};

const outboxEmptied = (table: string, id: string) =>
  new UpdateItemCommand({
    TableName: table,
    Key: { pk: s(id) },
    UpdateExpression: 'REMOVE pendingEvents, eventsKind, eventsDueAt',
  });

/** A store on a directory of its own, with the records table and `ids` written as settled sales. */
const storeWith = async (ids: readonly string[], flags: string[]) => {
  const dataDir = await newDataDir();
  const store = await startStore(dataDir, flags, children);
  const table = await createRecordsTable(store.endpoint);
  const dynamodb = storeClient(store.endpoint);
  for (const id of ids) {
    const put = settledSale(id);
    put.input.TableName = table;
    await dynamodb.send(put);
  }
  return { dataDir, store, table, dynamodb };
};

const stop = async (store: StoreProcess, dynamodb: DynamoDBClient) => {
  dynamodb.destroy();
  store.child.kill('SIGTERM');
  await store.exited;
};

describe('two records settled by one call, whose ids dynalite hashes alike', () => {
  const pair = idsDynaliteHashesAlike();
  const others = Array.from({ length: 4 }, () => randomBytes(16).toString('hex'));

  it('are both in the events and purge indexes, on every page size, and each leaves alone', async () => {
    // Prepare
    const { store, table, dynamodb } = await storeWith([...pair, ...others], []);
    try {
      // Act
      const events = await idsIn(dynamodb, table, 'events');
      const purge = await idsIn(dynamodb, table, 'purge');
      const paged = [await idsIn(dynamodb, table, 'events', 1), await idsIn(dynamodb, table, 'events', 2)];
      await dynamodb.send(outboxEmptied(table, pair[0]));
      const afterOne = await idsIn(dynamodb, table, 'events');

      // Assess
      const all = [...pair, ...others].sort();
      expect(events).toEqual(all);
      expect(purge).toEqual(all);
      expect(paged).toEqual([all, all]);
      expect(afterOne).toEqual(all.filter((id) => id !== pair[0]));
    } finally {
      await stop(store, dynamodb);
    }
  });

  it("control: with dynalite's own index keys, one of them is missing, and an emptied outbox takes both", async () => {
    // Prepare
    const { store, table, dynamodb } = await storeWith(pair, ['--no-whole-index-keys']);
    try {
      // Act
      const events = await idsIn(dynamodb, table, 'events');
      await dynamodb.send(outboxEmptied(table, pair[0]));
      const afterOne = await idsIn(dynamodb, table, 'events');

      // Assess
      expect(events).toHaveLength(1);
      expect(afterOne).toEqual([]);
    } finally {
      await stop(store, dynamodb);
    }
  });

  it.each([
    { case: 'rebuilt at the first start with whole keys', markedCurrent: false },
    { case: 'control: marked current instead, not rebuilt', markedCurrent: true },
  ])('a directory written with dynalite’s own keys: $case', async ({ markedCurrent }) => {
    // Prepare: written with dynalite's own keys, stopped cleanly (no repair for an unclean stop).
    const first = await storeWith(others, ['--no-whole-index-keys']);
    await stop(first.store, first.dynamodb);
    if (markedCurrent) await writeFile(join(first.dataDir, 'dynamodb.index-keys'), WHOLE_INDEX_KEYS_FORMAT);

    // Act
    const store = await startStore(first.dataDir, [], children);
    const dynamodb = storeClient(store.endpoint);
    try {
      await dynamodb.send(outboxEmptied(first.table, others[0] as string));
      const events = await idsIn(dynamodb, first.table, 'events');

      // Assess
      const left = others.filter((id) => id !== others[0]).sort();
      if (markedCurrent) expect(events).toContain(others[0]);
      else {
        expect(events).toEqual(left);
        expect(store.log.join('\n')).toMatch(/written with older index keys/);
      }
    } finally {
      await stop(store, dynamodb);
    }
  });

  it('are not asked for without atomic writes, whose updateIndexes is what writes them', async () => {
    // Prepare
    const dataDir = await newDataDir();

    // Act
    const starting = startLocalStore(dataDir, { atomicWrites: false, wholeIndexKeys: true, log: () => {} });

    // Assess
    await expect(starting).rejects.toThrow(/whole index keys need atomic writes/);
  });
});
