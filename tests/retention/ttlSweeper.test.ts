/**
 * The local stand-in for DynamoDB's TTL (dynalite has none): what expires and when, with the clock moved (`now`).
 * Records settle at T through the worker's real writes; content aliases and idempotency entries are written by the
 * store's own functions. Every test has a table of its own (dynalite, created from serverless.yml).
 */
import { randomBytes } from 'node:crypto';
import { DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { claimIdempotencyKey, readIdempotencyEntry } from '../../lib/store/idempotencyEntries.ts';
import { getStatusRecord, putContentAliasIfAbsent, readContentSlot } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { startTtlSweeper, sweepExpiredItems } from '../../local/ttlSweeper.ts';
import { caseInput } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof freshAws>>;
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

beforeAll(async () => {
  aws = await freshAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
});

afterAll(() => dynamo.stop());

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  delete process.env.RECORD_RETENTION_DAYS;
  dynamo.reset();
});

const T = new Date('2026-01-10T12:00:00.000Z');
const day = (days: number) => new Date(T.getTime() + days * 86_400_000);

/** A case accepted a minute before T (as intake stores it) and delivered at T through the worker's writes. */
const deliveredAtT = async (): Promise<StatusRecord> => {
  const record = caseInput() as unknown as CaseRecord;
  const status = newStatusRecord(
    randomBytes(16).toString('hex'),
    { kind: 'caseRecord', records: [record], requestId: 'ttl', owner: 'example-web-forms' },
    record,
    new Date(T.getTime() - 60_000),
  );
  await seedStatusRecords([status]);
  const leaseUntil = new Date(T.getTime() + 90_000).toISOString();
  const claim = await claimRecord(status.id, { now: T, leaseUntil });
  if (!claim.claimed) throw new Error('not claimed');
  const written = await recordAttempt(
    claim.claimed,
    { status: 'delivered', attempts: 1, at: T, downstreamId: '500Q000000TTL01' },
    leaseUntil,
  );
  if (!written) throw new Error('not written');
  return written;
};

describe('sweepExpiredItems', () => {
  it('dynalite really has no TTL: it reports TTL disabled on a table serverless.yml declares it on', async () => {
    const client = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
    try {
      const out = await client.send(
        new DescribeTimeToLiveCommand({ TableName: aws.resources.tables.RecordsTable.name }),
      );
      expect(out.TimeToLiveDescription?.TimeToLiveStatus).toBe('DISABLED');
    } finally {
      client.destroy();
    }
  });

  it('deletes a settled record 400 days after it settled: still there at 399 days, gone at 401', async () => {
    // Prepare
    const record = await deliveredAtT();
    // Act
    const at399 = await sweepExpiredItems({ now: day(399) });
    const thereAt399 = await getStatusRecord(record.id);
    const at401 = await sweepExpiredItems({ now: day(401) });
    // Assess
    expect(record.expiresAt).toBe(day(400).getTime() / 1000);
    expect(at399).toEqual({ deleted: 0 });
    expect(thereAt399).toEqual(record);
    expect(at401).toEqual({ deleted: 1 });
    expect(await getStatusRecord(record.id)).toBeUndefined();
  });

  it('follows RECORD_RETENTION_DAYS as it was when the record settled', async () => {
    process.env.RECORD_RETENTION_DAYS = '90';
    const record = await deliveredAtT();
    delete process.env.RECORD_RETENTION_DAYS;
    expect(await sweepExpiredItems({ now: day(89) })).toEqual({ deleted: 0 });
    expect(await sweepExpiredItems({ now: day(91) })).toEqual({ deleted: 1 });
    expect(await getStatusRecord(record.id)).toBeUndefined();
  });

  it('never deletes an accepted record (it has no expiresAt until it settles)', async () => {
    const record = caseInput() as unknown as CaseRecord;
    const accepted = newStatusRecord(
      randomBytes(16).toString('hex'),
      { kind: 'caseRecord', records: [record], requestId: 'ttl', owner: 'example-web-forms' },
      record,
      T,
    );
    await seedStatusRecords([accepted]);
    expect(await sweepExpiredItems({ now: day(5000) })).toEqual({ deleted: 0 });
    expect(await getStatusRecord(accepted.id)).toEqual(accepted);
  });

  it('deletes a content alias (ids only) 400 days after its acceptance', async () => {
    // Prepare
    const alias = {
      id: randomBytes(16).toString('hex'),
      aliasOf: randomBytes(16).toString('hex'),
      kind: 'caseRecord' as const,
      owner: 'example-web-forms',
      acceptedAt: T.toISOString(),
    };
    await putContentAliasIfAbsent(alias);
    // Act
    const at399 = await sweepExpiredItems({ now: day(399) });
    const stored = await readContentSlot(alias.id);
    const at401 = await sweepExpiredItems({ now: day(401) });
    // Assess
    expect(at399).toEqual({ deleted: 0 });
    expect(stored).toEqual({ ...alias, expiresAt: day(400).getTime() / 1000 });
    expect(at401).toEqual({ deleted: 1 });
    expect(await readContentSlot(alias.id)).toBeUndefined();
  });

  it('deletes an idempotency entry once its 24 hours are over, as DynamoDB TTL does on AWS', async () => {
    const nowSeconds = T.getTime() / 1000;
    const entry = {
      kind: 'salesRegistration' as const,
      keyHash: randomBytes(32).toString('hex'),
      bodyHash: 'b',
      state: 'done' as const,
      startedAt: T.toISOString(),
      expiresAt: nowSeconds + 86_400,
    };
    expect(await claimIdempotencyKey(entry, nowSeconds)).toBe(true);
    expect(await sweepExpiredItems({ now: new Date(T.getTime() + 86_399_000) })).toEqual({ deleted: 0 });
    expect(await sweepExpiredItems({ now: new Date(T.getTime() + 86_401_000) })).toEqual({ deleted: 1 });
    expect(await readIdempotencyEntry(entry.kind, entry.keyHash)).toBeUndefined();
  });

  it('keeps an item given a later expiresAt between the scan and the delete', async () => {
    // Prepare: the record's expiry is moved on just before the sweeper's delete reaches the table.
    const record = await deliveredAtT();
    dynamo.reset();
    dynamo.before('DeleteItem', async () => {
      await seedStatusRecords([{ ...record, expiresAt: day(800).getTime() / 1000 }]);
    });
    // Act
    const swept = await sweepExpiredItems({ now: day(401) });
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(swept).toEqual({ deleted: 0 });
    expect(await getStatusRecord(record.id)).toMatchObject({ id: record.id });
  });

  it('reads every page of the table', async () => {
    // Prepare: five expired aliases, read two a page.
    const aliases = Array.from({ length: 5 }, () => ({
      id: randomBytes(16).toString('hex'),
      aliasOf: randomBytes(16).toString('hex'),
      kind: 'caseRecord' as const,
      owner: 'example-web-forms',
      acceptedAt: T.toISOString(),
    }));
    for (const alias of aliases) await putContentAliasIfAbsent(alias);
    // Act
    dynamo.reset();
    const swept = await sweepExpiredItems({ now: day(401), pageSize: 2 });
    // Assess
    expect(swept).toEqual({ deleted: 5 });
    expect(dynamo.calls.filter((call) => call === 'Scan').length).toBeGreaterThanOrEqual(3);
  });
});

describe('startTtlSweeper', () => {
  it('sweeps at once when started, logs what it deleted, and stops', async () => {
    // Prepare: an alias accepted 401 days ago by the real clock.
    const alias = {
      id: randomBytes(16).toString('hex'),
      aliasOf: randomBytes(16).toString('hex'),
      kind: 'salesRegistration' as const,
      owner: 'example-dealer',
      acceptedAt: new Date(Date.now() - 401 * 86_400_000).toISOString(),
    };
    await putContentAliasIfAbsent(alias);
    const lines: string[] = [];
    // Act
    const sweeper = startTtlSweeper({ log: (line) => lines.push(line), env: {} });
    await sweeper.stop();
    // Assess
    expect(lines).toEqual(['TTL sweeper: deleted 1 expired item(s)']);
    expect(await readContentSlot(alias.id)).toBeUndefined();
  });

  it('logs a failed sweep and keeps running', async () => {
    const lines: string[] = [];
    dynamo.before('Scan', () => ({ status: 400, type: 'ResourceNotFoundException' }));
    const sweeper = startTtlSweeper({ log: (line) => lines.push(line), env: {} });
    await sweeper.stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^TTL sweeper: /);
  });
});
