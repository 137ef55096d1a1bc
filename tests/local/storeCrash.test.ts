/**
 * The local store (dynalite) killed in the middle of writes, many times: after each restart on the same directory,
 * every index of the records table (serverless.yml's, created as `npm start` creates it) agrees with the items.
 *
 * Negative control: `STORE_CRASH_NEGATIVE_CONTROL=1 npm test -- tests/local/storeCrash.test.ts` runs the same
 * kills with neither atomic writes nor the repair after an unclean stop; the indexes then disagree.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { storeClient as client, createRecordsTable, startStore, storeScope } from './storeProcesses.ts';

const negativeControl = process.env.STORE_CRASH_NEGATIVE_CONTROL === '1';

const { children, dataDir: newDataDir } = storeScope('dealer-gateway-crash-');

type Item = Record<string, AttributeValue>;

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)] as T;
const s = (value: string): AttributeValue => ({ S: value });
const iso = () => new Date(Date.now() + Math.floor(Math.random() * 1e9)).toISOString();
const statuses = ['accepted', 'delivered', 'failed', 'rejected'] as const;

/** A record-like item touching every index's attributes, each sparse one present or not. */
const randomItem = (pk: string): Item => {
  const status = pick(statuses);
  const item: Item = {
    pk: s(pk),
    id: s(pk),
    kind: s('sale'),
    status: s(status),
    statusKey: s(`sale#${status}`),
    acceptedAt: s(iso()),
    updatedAt: s(iso()),
    attempts: { N: String(Math.floor(Math.random() * 5)) },
    record: s('x'.repeat(Math.floor(Math.random() * 2000))),
  };
  if (status === 'accepted') Object.assign(item, { openKind: s('sale'), dueAt: s(iso()) });
  if (Math.random() < 0.5) Object.assign(item, { frameKey: s(`dealer#F${Math.floor(Math.random() * 9)}`) });
  if (Math.random() < 0.5) Object.assign(item, { eventsKind: s('sale'), eventsDueAt: s(iso()) });
  if (Math.random() < 0.3) Object.assign(item, { purgeKind: s('sale'), purgeAt: s(iso()) });
  return item;
};

/** One write of the kinds the service makes: a put, an update that moves or drops index keys, a delete; or a batch. */
const randomWrite = (dynamodb: DynamoDBClient, table: string) => {
  const pk = `rec-${Math.floor(Math.random() * 60)}`;
  const dice = Math.random();
  if (dice < 0.4) return dynamodb.send(new PutItemCommand({ TableName: table, Item: randomItem(pk) }));
  if (dice < 0.85) {
    const status = pick(statuses);
    const open = status === 'accepted';
    return dynamodb.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: s(pk) },
        UpdateExpression:
          'SET #status = :status, statusKey = :statusKey, acceptedAt = if_not_exists(acceptedAt, :now), ' +
          `updatedAt = :now, eventsKind = :kind, eventsDueAt = :now${open ? ', openKind = :kind, dueAt = :now' : ''} ` +
          `ADD attempts :one${open ? '' : ' REMOVE openKind, dueAt'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': s(status),
          ':statusKey': s(`sale#${status}`),
          ':now': s(iso()),
          ':kind': s('sale'),
          ':one': { N: '1' },
        },
      }),
    );
  }
  if (dice < 0.95) return dynamodb.send(new DeleteItemCommand({ TableName: table, Key: { pk: s(pk) } }));
  const [put, remove] = Math.random() < 0.5 ? ['a', 'b'] : ['b', 'a'];
  return dynamodb.send(
    new BatchWriteItemCommand({
      RequestItems: {
        [table]: [
          { PutRequest: { Item: randomItem(`${pk}-${put}`) } },
          { PutRequest: { Item: randomItem(`${pk}-c`) } },
          { DeleteRequest: { Key: { pk: s(`${pk}-${remove}`) } } },
        ],
      },
    }),
  );
};

const scanAll = async (dynamodb: DynamoDBClient, table: string, indexName?: string): Promise<Item[]> => {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: table, IndexName: indexName, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
};

const canonical = (item: Item) =>
  JSON.stringify(Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b))));

/** Every index entry that disagrees with the table's items: missing (an item's entry absent) or extra. */
const disagreements = async (endpoint: string, table: string): Promise<string[]> => {
  const dynamodb = client(endpoint);
  try {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    const items = await scanAll(dynamodb, table);
    const found: string[] = [];
    for (const index of Table?.GlobalSecondaryIndexes ?? []) {
      const keys = (index.KeySchema ?? []).map((key) => key.AttributeName as string);
      const projected = ['pk', ...keys, ...(index.Projection?.NonKeyAttributes ?? [])];
      const expected = items
        .filter((item) => keys.every((key) => item[key] !== undefined))
        .map((item) =>
          canonical(
            index.Projection?.ProjectionType === 'ALL'
              ? item
              : Object.fromEntries(
                  projected.filter((a) => item[a] !== undefined).map((a) => [a, item[a] as AttributeValue]),
                ),
          ),
        );
      const actual = (await scanAll(dynamodb, table, index.IndexName)).map(canonical);
      const want = new Set(expected);
      const have = new Set(actual);
      for (const entry of want) if (!have.has(entry)) found.push(`${index.IndexName}: missing ${entry}`);
      for (const entry of have) if (!want.has(entry)) found.push(`${index.IndexName}: extra ${entry}`);
    }
    return found;
  } finally {
    dynamodb.destroy();
  }
};

/** Keeps `concurrency` writes in flight until `signal` aborts; errors (the kill) end nothing. */
const writeUntil = async (endpoint: string, table: string, signal: AbortSignal, concurrency = 16) => {
  const dynamodb = client(endpoint);
  let writes = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!signal.aborted) {
        writes += 1;
        await randomWrite(dynamodb, table).catch(() => {});
      }
    }),
  );
  dynamodb.destroy();
  return writes;
};

describe('the local store killed in the middle of writes', () => {
  it.each([
    { case: 'atomic writes alone (no repair)', flags: ['--no-repair'], kills: 20 },
    {
      case: 'the repair after an unclean stop alone (no atomic writes)',
      flags: ['--no-atomic-writes'],
      kills: 12,
    },
  ])(
    'keeps every index agreeing with the items over $kills kills: $case',
    async ({ flags, kills }) => {
      // Prepare
      const dataDir = await newDataDir();
      const storeFlags = negativeControl ? ['--no-repair', '--no-atomic-writes'] : flags;
      let store = await startStore(dataDir, storeFlags, children);
      const table = await createRecordsTable(store.endpoint);
      const broken: { kill: number; disagreements: string[] }[] = [];
      let writes = 0;

      // Act
      for (let kill = 1; kill <= kills; kill += 1) {
        const stop = new AbortController();
        const writing = writeUntil(store.endpoint, table, stop.signal);
        await sleep(50 + Math.random() * 250);
        store.child.kill('SIGKILL');
        await store.exited;
        stop.abort();
        writes += await writing;
        store = await startStore(dataDir, storeFlags, children);
        const found = await disagreements(store.endpoint, table);
        if (found.length > 0) broken.push({ kill, disagreements: found });
      }
      store.child.kill('SIGTERM');
      await store.exited;

      // Assess
      console.log(
        JSON.stringify({
          test: 'storeCrash',
          flags: storeFlags,
          kills,
          writes,
          restartsDisagreeing: broken.length,
        }),
      );
      expect(broken, `indexes disagreed with the items after ${broken.length} of ${kills} kills`).toEqual([]);
    },
    120_000,
  );
});
