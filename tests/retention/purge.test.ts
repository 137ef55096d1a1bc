/**
 * The removal of personal fields from settled records, with the clock moved (`now`): records settle at T through
 * the worker's real writes (claimRecord, recordAttempt), and the purge runs at chosen days after T against a table
 * of each test's own (dynalite, created from serverless.yml, with its `purge` index).
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import type { RecordStatus, StatusRecord } from '../../lib/records/types.ts';
import { purgePersonalData } from '../../lib/retention/purge.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt, reopenFailedRecord } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { frameGet, lambdaContext, statusGet } from '../../testkit/factories/apiGateway.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof freshAws>>;
/** The service's DynamoDB calls pass this proxy: a test runs a redrive at the purge's chosen call. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;
/** Reads the raw items, straight from dynalite. */
let raw: DynamoDBClient;

beforeAll(async () => {
  aws = await freshAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
  raw = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
});

afterAll(async () => {
  raw.destroy();
  await dynamo.stop();
});

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  delete process.env.PERSONAL_DATA_RETENTION_DAYS;
  delete process.env.RECORD_RETENTION_DAYS;
  dynamo.reset();
});

const T = new Date('2026-01-10T12:00:00.000Z');
const DAY = 86_400_000;
const day = (days: number) => new Date(T.getTime() + days * DAY);

/** Personal values no test factory uses, so that finding one anywhere means it was kept. */
const personalSale = (frame: string) => ({
  DealerId: 4321,
  FrameNum: frame,
  Model: 'CB500X',
  SaleDate: '2026-01-09',
  Name: 'Retentionperson',
  Name2: 'Quentin',
  CompanyName: 'Quentin Retentionperson Motors',
  Street: '9 Purge Lane',
  Floor: 'Unit 4',
  Town: 'Forgetton',
  Postcode: '7319',
  State: 'Tasmania',
  email: 'quentin.retentionperson@example.com',
  Phone: '+61 400 000 931',
  CommPriv: 'C' as const,
  RiderTraining: 'Booked with instructor Ivy Coachperson',
  MoreInfo: 'Y' as const,
  AllowSharing: 'N' as const,
  Operator: 'Olga Operatorperson',
  Finance: 'Loan 55-0192 for Q. Retentionperson',
  DOB: '1979-03-14',
  Sex: 'M' as const,
});

const personalCase = (frame: string): CaseRecord => ({
  title: 'Dr',
  firstName: 'Winifred',
  surname: 'Caseforget',
  email: 'winifred.caseforget@example.com',
  mobile: '+61 400 000 932',
  homePhone: '+61 3 9000 0933',
  addressPostcode: '3999',
  privacyConsent: true,
  subscribeToBrand: false,
  siteName: 'Service enquiry',
  comments: 'My neighbour Harold Otherperson said to call you.',
  origin: 'Web',
  frameNo: frame,
});

const SALE_PERSONAL = [
  'Retentionperson',
  'Quentin',
  'Quentin Retentionperson Motors',
  '9 Purge Lane',
  'Unit 4',
  'Forgetton',
  '7319',
  'Tasmania',
  'quentin.retentionperson@example.com',
  '+61 400 000 931',
  'Booked with instructor Ivy Coachperson',
  'Olga Operatorperson',
  'Loan 55-0192 for Q. Retentionperson',
  '1979-03-14',
];
const CASE_PERSONAL = [
  'Dr',
  'Winifred',
  'Caseforget',
  'winifred.caseforget@example.com',
  '+61 400 000 932',
  '+61 3 9000 0933',
  '3999',
  'My neighbour Harold Otherperson said to call you.',
];

/** A record accepted a minute before T, as intake stores it. */
const accept = async (kind: RecordKind, frame = uniqueFrame('RET')): Promise<StatusRecord> => {
  const record = kind === 'salesRegistration' ? personalSale(frame) : personalCase(frame);
  const owner = kind === 'salesRegistration' ? 'example-dealer' : 'example-web-forms';
  const status = newStatusRecord(
    randomBytes(16).toString('hex'),
    { kind, records: [record as SalesRegistration], requestId: 'retention', owner },
    record as SalesRegistration,
    new Date(T.getTime() - 60_000),
  );
  await seedStatusRecords([status]);
  return status;
};

/** One delivery attempt at `at` ending in `status`, through the worker's own writes (claim, then outcome). */
const settle = async (
  id: string,
  status: Exclude<RecordStatus, 'accepted'>,
  at: Date,
): Promise<StatusRecord> => {
  const leaseUntil = new Date(at.getTime() + 90_000).toISOString();
  const claim = await claimRecord(id, {
    now: at,
    leaseUntil,
  });
  if (!claim.claimed) throw new Error(`record ${id} not claimed`);
  const written = await recordAttempt(
    claim.claimed,
    {
      status,
      attempts: status === 'failed' ? 0 : 1,
      at,
      ...(status === 'delivered' ? { downstreamId: '4900000017' } : {}),
      ...(status === 'rejected'
        ? { error: 'SAP refused the registration: frame number already registered' }
        : {}),
      ...(status === 'failed' ? { error: 'SAP did not answer within 10 s' } : {}),
    },
    leaseUntil,
  );
  if (!written) throw new Error(`outcome of ${id} not written`);
  return written;
};

/** Redrives a failed record at `at`, as npm run redrive does. */
const redrive = async (id: string, at: Date) => {
  const current = await getStatusRecord(id);
  if (!current) throw new Error(`no record ${id}`);
  return reopenFailedRecord(current, { at, dueAt: new Date(at.getTime() + 300_000).toISOString() });
};

/** The stored item as DynamoDB JSON text: every attribute, index keys and all. */
const rawItem = async (id: string): Promise<string> => {
  const out = await raw.send(
    new GetItemCommand({ TableName: aws.resources.tables.RecordsTable.name, Key: { pk: { S: id } } }),
  );
  return JSON.stringify(out.Item ?? {});
};

/** The personal values found anywhere in the stored item (each searched as a whole JSON string). */
const personalValuesIn = async (id: string, values: string[]) => {
  const text = await rawItem(id);
  return values.filter((value) => text.includes(JSON.stringify(value)));
};

const lookUps = async (sale: StatusRecord, frame: string, kase: StatusRecord) => {
  const answers = await Promise.all([
    recordStatus(statusGet(`/erp/sales_registration/${sale.id}`, { id: sale.id }), lambdaContext()),
    recordStatus(frameGet(frame), lambdaContext()),
    recordStatus(statusGet(`/crm/case/${kase.id}`, { CrmId: kase.id }), lambdaContext()),
  ]);
  return answers.map((answer) => ({ status: answer.statusCode, body: JSON.parse(answer.body) }));
};

describe('purgePersonalData: settled records', () => {
  it('keeps the personal fields of a delivered sale and a rejected case for 30 days, then removes every one of them', async () => {
    // Prepare: both settled at T.
    const frame = uniqueFrame('RET');
    const sale = await accept('salesRegistration', frame);
    const kase = await accept('caseRecord');
    const settledSale = await settle(sale.id, 'delivered', T);
    const settledCase = await settle(kase.id, 'rejected', T);
    const answersBefore = await lookUps(sale, frame, kase);
    // Act
    const at29 = await purgePersonalData({ now: day(29) });
    const saleAt29 = await getStatusRecord(sale.id);
    const caseAt29 = await getStatusRecord(kase.id);
    const personalAt29 = await personalValuesIn(sale.id, SALE_PERSONAL);
    const at31 = await purgePersonalData({ now: day(31) });
    // Assess: nothing removed at 29 days.
    expect(at29).toEqual({ purged: { salesRegistration: 0, caseRecord: 0 }, skipped: 0, limited: false });
    expect(saleAt29).toEqual(settledSale);
    expect(caseAt29).toEqual(settledCase);
    expect(personalAt29).toEqual(SALE_PERSONAL);
    // Assess: at 31 days, not one personal value anywhere in the stored items.
    expect(at31).toEqual({ purged: { salesRegistration: 1, caseRecord: 1 }, skipped: 0, limited: false });
    expect(await personalValuesIn(sale.id, SALE_PERSONAL)).toEqual([]);
    expect(await personalValuesIn(kase.id, CASE_PERSONAL)).toEqual([]);
    // What look-ups, events and operations need stays; the personal fields and the purge index keys are gone.
    const saleAfter = await getStatusRecord(sale.id);
    const caseAfter = await getStatusRecord(kase.id);
    const { record: _saleRecord, purgeKind: _sk, purgeAt: _sa, ...saleKept } = settledSale;
    const { record: _caseRecord, purgeKind: _ck, purgeAt: _ca, ...caseKept } = settledCase;
    expect(saleAfter).toEqual({
      ...saleKept,
      record: {
        DealerId: 4321,
        FrameNum: frame,
        Model: 'CB500X',
        SaleDate: '2026-01-09',
        CommPriv: 'C',
        MoreInfo: 'Y',
        AllowSharing: 'N',
      },
      personalDataRemovedAt: day(31).toISOString(),
    });
    expect(caseAfter).toEqual({
      ...caseKept,
      record: {
        privacyConsent: true,
        subscribeToBrand: false,
        siteName: 'Service enquiry',
        origin: 'Web',
        frameNo: kase.record && (kase.record as CaseRecord).frameNo,
      },
      personalDataRemovedAt: day(31).toISOString(),
    });
    expect(saleAfter?.expiresAt).toBe(settledSale.expiresAt);
    // The status look-ups and the look-up by frame number answer exactly as before.
    expect(await lookUps(sale, frame, kase)).toEqual(answersBefore);
    expect(answersBefore.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('removes them at purgeAt itself (30 days to the millisecond), not a millisecond before', async () => {
    const sale = await accept('salesRegistration');
    await settle(sale.id, 'delivered', T);
    const before = await purgePersonalData({ now: new Date(day(30).getTime() - 1) });
    const at = await purgePersonalData({ now: day(30) });
    expect(before.purged.salesRegistration).toBe(0);
    expect(at.purged.salesRegistration).toBe(1);
  });

  it('follows PERSONAL_DATA_RETENTION_DAYS as it was when the record settled', async () => {
    // Prepare
    process.env.PERSONAL_DATA_RETENTION_DAYS = '7';
    const kase = await accept('caseRecord');
    await settle(kase.id, 'delivered', T);
    delete process.env.PERSONAL_DATA_RETENTION_DAYS;
    // Act
    const at6 = await purgePersonalData({ now: day(6) });
    const at8 = await purgePersonalData({ now: day(8) });
    // Assess
    expect(at6.purged.caseRecord).toBe(0);
    expect(at8.purged.caseRecord).toBe(1);
  });

  it('running it again is harmless: nothing more is found, the record stays as the first run left it', async () => {
    // Prepare
    const sale = await accept('salesRegistration');
    const kase = await accept('caseRecord');
    await Promise.all([settle(sale.id, 'rejected', T), settle(kase.id, 'delivered', T)]);
    const first = await purgePersonalData({ now: day(31) });
    const afterFirst = await Promise.all([rawItem(sale.id), rawItem(kase.id)]);
    // Act
    const again = await purgePersonalData({ now: day(32) });
    const twiceAtOnce = await Promise.all([
      purgePersonalData({ now: day(33) }),
      purgePersonalData({ now: day(33) }),
    ]);
    // Assess
    expect(first.purged).toEqual({ salesRegistration: 1, caseRecord: 1 });
    expect(again).toEqual({ purged: { salesRegistration: 0, caseRecord: 0 }, skipped: 0, limited: false });
    expect(twiceAtOnce.map((run) => run.purged)).toEqual([
      { salesRegistration: 0, caseRecord: 0 },
      { salesRegistration: 0, caseRecord: 0 },
    ]);
    expect(await Promise.all([rawItem(sale.id), rawItem(kase.id)])).toEqual(afterFirst);
  });

  it('never touches an accepted record, nor one whose purge time has not come', async () => {
    const waiting = await accept('salesRegistration');
    const recent = await accept('caseRecord');
    await settle(recent.id, 'delivered', day(20));
    const run = await purgePersonalData({ now: day(45) });
    expect(run.purged).toEqual({ salesRegistration: 0, caseRecord: 0 });
    expect(await personalValuesIn(waiting.id, SALE_PERSONAL)).toEqual(SALE_PERSONAL);
    expect(await personalValuesIn(recent.id, CASE_PERSONAL)).toEqual(CASE_PERSONAL);
  });

  it('is bounded: a run stops at its limit, oldest first, and the next run takes the rest', async () => {
    // Prepare: three sales settled a day apart.
    const sales = [
      await accept('salesRegistration'),
      await accept('salesRegistration'),
      await accept('salesRegistration'),
    ];
    for (const [index, sale] of sales.entries()) await settle(sale.id, 'delivered', day(index));
    // Act
    const first = await purgePersonalData({ now: day(40), limit: 2 });
    const removedFirst = await Promise.all(
      sales.map(async (s) => (await getStatusRecord(s.id))?.personalDataRemovedAt),
    );
    const second = await purgePersonalData({ now: day(40), limit: 2 });
    // Assess
    expect(first).toEqual({ purged: { salesRegistration: 2, caseRecord: 0 }, skipped: 0, limited: true });
    expect(removedFirst.map(Boolean)).toEqual([true, true, false]);
    expect(second).toEqual({ purged: { salesRegistration: 1, caseRecord: 0 }, skipped: 0, limited: false });
  });
});

describe('purgePersonalData: failed and redriven records', () => {
  it('keeps the personal fields of a failed record twice as long: there at 31 days, gone at 61', async () => {
    // Prepare
    const sale = await accept('salesRegistration');
    await settle(sale.id, 'failed', T);
    // Act
    const at31 = await purgePersonalData({ now: day(31) });
    const keptAt31 = await personalValuesIn(sale.id, SALE_PERSONAL);
    const at61 = await purgePersonalData({ now: day(61) });
    // Assess
    expect(at31.purged.salesRegistration).toBe(0);
    expect(keptAt31).toEqual(SALE_PERSONAL);
    expect(at61.purged.salesRegistration).toBe(1);
    expect(await personalValuesIn(sale.id, SALE_PERSONAL)).toEqual([]);
  });

  it('a failed record redriven at 40 days and delivered at 41 keeps them until 71 days', async () => {
    // Prepare
    const kase = await accept('caseRecord');
    await settle(kase.id, 'failed', T);
    expect(await redrive(kase.id, day(40))).toMatchObject({ status: 'accepted' });
    const redriven = await getStatusRecord(kase.id);
    await settle(kase.id, 'delivered', day(41));
    // Act
    const at61 = await purgePersonalData({ now: day(61) });
    const at70 = await purgePersonalData({ now: new Date(day(71).getTime() - 1) });
    const keptAt70 = await personalValuesIn(kase.id, CASE_PERSONAL);
    const at71 = await purgePersonalData({ now: day(71) });
    // Assess: the redrive called the removal off; delivering dated it anew.
    expect(redriven?.purgeAt).toBeUndefined();
    expect(redriven?.purgeKind).toBeUndefined();
    expect(at61.purged.caseRecord).toBe(0);
    expect(at70.purged.caseRecord).toBe(0);
    expect(keptAt70).toEqual(CASE_PERSONAL);
    expect(at71.purged.caseRecord).toBe(1);
    expect(await personalValuesIn(kase.id, CASE_PERSONAL)).toEqual([]);
  });

  it('leaves alone a record redriven between its query and its update: the condition refuses the write', async () => {
    // Prepare: a failed sale due for the purge, redriven just before the purge's update reaches the table.
    const sale = await accept('salesRegistration');
    await settle(sale.id, 'failed', T);
    dynamo.reset();
    // The first update is the cleaning of the record's feed entry (lib/feed/feedErrors.ts): let it through.
    dynamo.before(
      'UpdateItem',
      async () => {
        await redrive(sale.id, day(61));
      },
      1,
    );
    // Act
    const run = await purgePersonalData({ now: day(61) });
    // Assess: the race happened, the purge gave way, and the record keeps what its delivery needs.
    expect(dynamo.pending()).toEqual([]);
    // The feed entry's cleaning, then the purge's update arrived, the redrive (its read and write) ran, then the
    // update went on to the table.
    expect(dynamo.calls).toEqual([
      'Query',
      'BatchGetItem',
      'UpdateItem',
      'UpdateItem',
      'GetItem',
      'UpdateItem',
      'Query',
    ]);
    expect(run).toEqual({ purged: { salesRegistration: 0, caseRecord: 0 }, skipped: 1, limited: false });
    const after = await getStatusRecord(sale.id);
    expect(after).toMatchObject({ status: 'accepted' });
    expect(after?.personalDataRemovedAt).toBeUndefined();
    expect(await personalValuesIn(sale.id, SALE_PERSONAL)).toEqual(SALE_PERSONAL);
  });

  it('leaves alone a record settled again between its read and its update: its later purgeAt refuses the write', async () => {
    // Prepare: a failed case kept as an older version stored it (no history, its outbox published), due at 60
    // days; between the purge's read and its update it is redriven and delivered at 61 days (purge due at 91).
    // No history or outbox size is compared for it, so only the condition on purgeAt can refuse the update.
    const stored = await accept('caseRecord');
    await seedStatusRecords([
      {
        ...stored,
        status: 'failed',
        statusKey: 'caseRecord#failed',
        attempts: 3,
        updatedAt: T.toISOString(),
        error: 'Salesforce did not answer within 10 s',
        openKind: undefined,
        dueAt: undefined,
        purgeKind: 'caseRecord',
        purgeAt: day(60).toISOString(),
      },
    ]);
    dynamo.reset();
    dynamo.before('UpdateItem', async () => {
      await redrive(stored.id, day(61));
      await settle(stored.id, 'delivered', day(61));
    });
    // Act
    const run = await purgePersonalData({ now: day(61), kinds: ['caseRecord'] });
    const after = await getStatusRecord(stored.id);
    // Assess: the race happened, the purge gave way, and the delivered record keeps its data until 91 days.
    expect(dynamo.pending()).toEqual([]);
    expect(run).toEqual({ purged: { salesRegistration: 0, caseRecord: 0 }, skipped: 1, limited: false });
    expect(after).toMatchObject({ status: 'delivered', purgeAt: day(91).toISOString() });
    expect(after?.personalDataRemovedAt).toBeUndefined();
    expect(await personalValuesIn(stored.id, CASE_PERSONAL)).toEqual(CASE_PERSONAL);
    expect((await purgePersonalData({ now: day(91), kinds: ['caseRecord'] })).purged.caseRecord).toBe(1);
  });

  it('does not write back an outbox published between its read and its update: skipped, purged on the next run', async () => {
    // Prepare: a rejected case whose event is still in its outbox; the publisher empties it just before the update.
    const kase = await accept('caseRecord');
    await settle(kase.id, 'rejected', T);
    dynamo.reset();
    dynamo.before('UpdateItem', async () => {
      await raw.send(
        new UpdateItemCommand({
          TableName: aws.resources.tables.RecordsTable.name,
          Key: { pk: { S: kase.id } },
          UpdateExpression: 'REMOVE pendingEvents, eventsKind, eventsDueAt',
        }),
      );
    });
    // Act
    const first = await purgePersonalData({ now: day(31), kinds: ['caseRecord'] });
    const between = await getStatusRecord(kase.id);
    const second = await purgePersonalData({ now: day(31), kinds: ['caseRecord'] });
    const after = await getStatusRecord(kase.id);
    // Assess: the published outbox did not come back (it would publish its event again, outside the events index).
    expect(first).toMatchObject({ purged: { caseRecord: 0 }, skipped: 1 });
    expect(between?.pendingEvents).toBeUndefined();
    expect(between?.personalDataRemovedAt).toBeUndefined();
    expect(second.purged.caseRecord).toBe(1);
    expect(after?.pendingEvents).toBeUndefined();
    expect(await personalValuesIn(kase.id, CASE_PERSONAL)).toEqual([]);
  });

  it('skips a record redriven between its query and its read, without writing', async () => {
    const kase = await accept('caseRecord');
    await settle(kase.id, 'failed', T);
    dynamo.reset();
    dynamo.before('BatchGetItem', async () => {
      await redrive(kase.id, day(61));
    });
    const run = await purgePersonalData({ now: day(61), kinds: ['caseRecord'] });
    expect(run.skipped).toBe(1);
    expect(dynamo.calls.filter((call) => call === 'UpdateItem')).toHaveLength(1);
    expect(await personalValuesIn(kase.id, CASE_PERSONAL)).toEqual(CASE_PERSONAL);
  });

  it('a failed record whose personal fields are gone cannot be redriven (it could not be delivered)', async () => {
    const sale = await accept('salesRegistration');
    await settle(sale.id, 'failed', T);
    await purgePersonalData({ now: day(61) });
    expect(await redrive(sale.id, day(62))).toBeUndefined();
    expect(await getStatusRecord(sale.id)).toMatchObject({ status: 'failed' });
  });
});
