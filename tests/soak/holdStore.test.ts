/**
 * What the soak reads of the holds from a running service's store (soak/holdWatch.ts), against dynalite through a
 * runner.json as `npm start` writes it: the hold items (each opening's `heldSince`, kept after the close), and the
 * call that opened each hold (the records of its downstream with a history entry at its `heldSince`), counted as
 * answered (delivered, rejected) or failed. A store that cannot be read gives undefined, never "nothing found".
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { holdItemsInStore, openingCallsInStore } from '../../soak/holdWatch.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const T = '2026-11-28T07:20:25.473Z';
const opening = (downstream: 'erp' | 'crm') => ({
  downstream,
  reason: 'outage',
  heldSince: T,
  seenIn: 'log' as const,
});

let dataDir: string;
let dynamo: DynamoDBClient;
let table: string;

const put = (item: Record<string, unknown>) =>
  dynamo.send(
    new PutItemCommand({ TableName: table, Item: marshall(item, { removeUndefinedValues: true }) }),
  );

const record = (id: string, kind: string, history: { at: string; status: string; error?: string }[]) =>
  put({ pk: id, id, kind, status: history.at(-1)?.status ?? 'accepted', history });

beforeAll(async () => {
  const aws = await isolatedAws();
  table = aws.resources.env.RECORDS_TABLE;
  const endpoint = inject('dynamoEndpoint');
  dynamo = new DynamoDBClient(localClientConfig(endpoint));
  dataDir = await mkdtemp(join(tmpdir(), 'soak-holds-'));
  await writeFile(
    join(dataDir, 'runner.json'),
    JSON.stringify({ dynamoEndpoint: endpoint, env: { RECORDS_TABLE: table } }),
  );
});
afterAll(async () => {
  dynamo.destroy();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the soak reads the holds from the store', () => {
  it('finds the call that opened each hold by its records history entries at heldSince', async () => {
    // Prepare: a Collections call at T answered in part (2 upserted, 1 locked, 1 refused for content); a $batch
    // at T failed whole; entries of the same records at other times, and of the other kind at T, are not its.
    const locked = 'HTTP 400: UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record';
    await record('c1', 'caseRecord', [{ at: T, status: 'delivered' }]);
    await record('c2', 'caseRecord', [
      { at: '2026-11-28T07:20:20.000Z', status: 'accepted', error: locked },
      { at: T, status: 'delivered' },
    ]);
    await record('c3', 'caseRecord', [{ at: T, status: 'accepted', error: locked }]);
    await record('c4', 'caseRecord', [{ at: T, status: 'rejected', error: 'INVALID_EMAIL_ADDRESS' }]);
    await record('c5', 'caseRecord', [{ at: '2026-11-28T07:20:25.474Z', status: 'delivered' }]);
    for (const id of ['s1', 's2', 's3'])
      await record(id, 'salesRegistration', [
        { at: T, status: 'accepted', error: 'HTTP 503 to the whole $batch' },
      ]);
    // Act
    const calls = await openingCallsInStore(dataDir, [opening('crm'), opening('erp')]);
    // Assess
    expect(calls).toEqual(
      new Map([
        [`crm ${Date.parse(T)}`, { answered: 3, failed: 1 }],
        [`erp ${Date.parse(T)}`, { answered: 0, failed: 3 }],
      ]),
    );
  });

  it('reads both hold items, held or closed since', async () => {
    // Prepare
    await put({ pk: 'hold#erp', downstream: 'erp', held: true, reason: 'outage', heldSince: T, version: 1 });
    await put({ pk: 'hold#crm', downstream: 'crm', held: false, heldSince: T, closedAt: T, version: 2 });
    // Act
    const items = await holdItemsInStore(dataDir);
    // Assess
    expect(items.sort((a, b) => a.downstream.localeCompare(b.downstream))).toEqual([
      { downstream: 'crm', held: false, reason: undefined, heldSince: T },
      { downstream: 'erp', held: true, reason: 'outage', heldSince: T },
    ]);
  });

  it('answers undefined (not an empty map) when the store cannot be read', async () => {
    // Act / Assess
    expect(await openingCallsInStore(join(dataDir, 'nowhere'), [opening('crm')])).toBeUndefined();
    expect(await holdItemsInStore(join(dataDir, 'nowhere'))).toEqual([]);
  });
});
