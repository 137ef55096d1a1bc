/**
 * The campaign's check of the store's indexes at the end of a run (soak/indexAgreement.ts), on a data directory of
 * the local store with the records table of serverless.yml, read once the store stopped.
 *
 * Controls: an entry taken out of the `events` index, and one of a record never written put in, are each counted;
 * a directory written with dynalite's own index keys disagrees everywhere (the check reads with npm start's keys).
 */
import type { Server } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AttributeValue, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  createDynalite,
  type DynaliteStore,
  indexPrefix,
  prefixRange,
} from '../../local/emulators/dynalite/dynaliteInternals.ts';
import { installWholeIndexKeys } from '../../local/emulators/dynalite/wholeIndexKeys.ts';
import { indexAgreement, indexesAgree } from '../../soak/indexAgreement.ts';
import { recordsTableStore } from '../local/recordsTableStore.ts';
import { createRecordsTable, startStore, storeClient, storeScope } from '../local/storeProcesses.ts';

const { children, dataDir: dataDirOfItsOwn } = storeScope('dealer-gateway-index-agreement-');

const s = (value: string): AttributeValue => ({ S: value });

/** Three settled sales with full outboxes, one accepted and open: entries in `events`, `purge`, `open`. */
const writeRecords = async (dynamodb: DynamoDBClient, tableName: string) => {
  for (const id of ['sale-1', 'sale-2', 'sale-3'])
    await dynamodb.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: s(id),
          status: s('delivered'),
          eventsKind: s('salesRegistration'),
          eventsDueAt: s('2026-11-28T10:12:35.247Z'),
          purgeKind: s('salesRegistration'),
          purgeAt: s('2027-02-26T10:11:35.247Z'),
        },
      }),
    );
  await dynamodb.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        pk: s('sale-4'),
        status: s('accepted'),
        openKind: s('salesRegistration'),
        dueAt: s('2026-11-28T10:12:00.000Z'),
      },
    }),
  );
};

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

/** A store of npm start's kind, written, `plant` done on its LevelDB, then stopped. */
const stoppedStore = async (plant?: (store: DynaliteStore, tableName: string) => Promise<void>) => {
  const dataDir = await dataDirOfItsOwn();
  const { server, store, dynamodb, tableName } = await recordsTableStore(dataDir);
  await writeRecords(dynamodb, tableName);
  await plant?.(store, tableName);
  dynamodb.destroy();
  await close(server);
  return dataDir;
};

describe("the campaign's check of the indexes against the items", () => {
  it('finds every index agreeing with the items the service wrote', async () => {
    // Prepare
    const dataDir = await stoppedStore();

    // Act
    const agreement = await indexAgreement(dataDir);

    // Assess
    expect(agreement).toEqual({ items: 4, extra: 0, missing: 0, wrong: 0 });
    expect(indexesAgree(agreement)).toBe(true);
  });

  it('control: counts an entry missing from the events index, and one of a record never written', async () => {
    // Prepare
    const dataDir = await stoppedStore(async (store, tableName) => {
      const events = indexPrefix('Global', tableName, 'events');
      const found: string[] = [];
      for await (const [key] of store.db.iterator(prefixRange(events))) found.push(key);
      const [first] = found;
      if (!first) throw new Error('no events entry to take out');
      await store.db.batch([
        { type: 'del', key: first },
        { type: 'put', key: `${events}ghost`, value: { pk: s('never-written') } },
      ]);
    });

    // Act
    const agreement = await indexAgreement(dataDir);

    // Assess
    expect(agreement).toEqual({ items: 4, extra: 1, missing: 1, wrong: 0 });
    expect(indexesAgree(agreement)).toBe(false);
  });

  it("control: a directory written with dynalite's own index keys disagrees in every entry", async () => {
    // Prepare
    const dataDir = await dataDirOfItsOwn();
    const store = await startStore(dataDir, ['--no-whole-index-keys'], children);
    const dynamodb = storeClient(store.endpoint);
    await writeRecords(dynamodb, await createRecordsTable(store.endpoint));
    dynamodb.destroy();
    store.child.kill('SIGTERM');
    await store.exited;

    // Act
    const agreement = await indexAgreement(dataDir);

    // Assess: 4 items; entries in status (4), events (3), purge (3), open (1).
    expect(agreement.missing).toBeGreaterThan(0);
    expect(agreement.extra).toBe(agreement.missing);
    expect(indexesAgree(agreement)).toBe(false);
  });

  it("waits for the store's process to let go of its lock, and tells a lock never let go (control)", async () => {
    // Prepare: the stopped store opened again elsewhere, as a store process still exiting holds it.
    const dataDir = await stoppedStore();
    installWholeIndexKeys();
    const holder = createDynalite({ path: join(dataDir, 'dynamodb') }).store;
    await holder.db.open();
    const release = () => new Promise<void>((resolve) => holder.db.close(() => resolve()));

    // Act: held throughout two waits (the control), then let go 1.5 s into a reading.
    const refused = await indexAgreement(dataDir, { lockWaits: 2 }).catch((error: unknown) => error);
    const reading = indexAgreement(dataDir, { lockWaits: 10 });
    await sleep(1500);
    await release();

    // Assess
    expect(String(refused)).toMatch(/lock|failed to open/i);
    expect(await reading).toEqual({ items: 4, extra: 0, missing: 0, wrong: 0 });
  });

  it('refuses a directory that holds no store, rather than find an empty one agreeing', async () => {
    // Prepare
    const dataDir = await dataDirOfItsOwn();

    // Act
    const checking = indexAgreement(join(dataDir, 'elsewhere'));

    // Assess
    await expect(checking).rejects.toThrow(/no store in/);
  });
});
