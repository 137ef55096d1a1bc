/**
 * Content without an Idempotency-Key: the same content within 24 hours is the same record; after that, a new
 * generation with an id derived from the first. Here at the edges: exactly 24 hours, content back a second
 * time, a hint on the first record that is behind, a request that finds its own write after a lost answer (and
 * one that only looks like it), and a run of generations no request should have to walk. With the clock given.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptRecords, newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import { contentId, generationId } from '../../lib/intake/recordIds.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { readContentSlot } from '../../lib/store/statusRecords.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { CONTENT_ID_KEY } from '../../testkit/apiKeys.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { type FaultProxy, startFaultProxy } from '../../testkit/faultProxy.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const OWNER = 'example-web-forms';
const HOUR = 60 * 60 * 1000;
const T0 = new Date('2026-11-20T08:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

let aws: Awaited<ReturnType<typeof isolatedAws>>;
/** The service's DynamoDB calls pass this proxy; a test may have it lose the answer of its n-th PutItem. */
let dynamoProxy: FaultProxy;
let loseAnswerOfPut: number | undefined;
let puts = 0;

beforeAll(async () => {
  aws = await isolatedAws();
  dynamoProxy = await startFaultProxy({
    upstream: () => aws.dynamoEndpoint,
    policy: (operation) => {
      if (operation !== 'PutItem') return undefined;
      puts++;
      return puts === loseAnswerOfPut ? { kind: 'loseAnswer' } : undefined;
    },
  });
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamoProxy.endpoint;
});

afterAll(() => dynamoProxy.stop());

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamoProxy.endpoint;
  loseAnswerOfPut = undefined;
  puts = 0;
});

const caseRecord = (): CaseRecord => ({
  firstName: 'Gen',
  surname: 'Eration',
  email: 'generation@example.com',
  frameNo: uniqueFrame('GEN'),
});
const request = (record: CaseRecord, requestId: string = randomUUID()) => ({
  kind: 'caseRecord' as const,
  records: [record],
  requestId,
  owner: OWNER,
});
/** Accepts the record at `now` and returns its id. */
const acceptAt = async (record: CaseRecord, now: Date, requestId?: string) => {
  const [id] = await acceptRecords({ ...request(record, requestId), now });
  return id;
};
const queuedIds = async () => (await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id);
/** A stored record of this content's generation `generation`, accepted at `acceptedAt`, as intake writes it. */
const generationRecord = (record: CaseRecord, generation: number, acceptedAt: Date) =>
  newStatusRecord(
    generationId(contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER), generation),
    request(record),
    record,
    acceptedAt,
  );

describe('the duplicate window', () => {
  it('is the same record until 24 hours have passed, and a new generation from that moment', async () => {
    // Prepare
    const record = caseRecord();
    const first = await acceptAt(record, T0);
    // Act
    const justBefore = await acceptAt(record, at(24 * HOUR - 1));
    const onTheDot = await acceptAt(record, at(24 * HOUR));
    // Assess
    expect(justBefore).toBe(first);
    expect(onTheDot).toBe(generationId(first, 1));
    expect(await queuedIds()).toEqual([first, onTheDot]);
  });

  it('content back after 24 hours twice: generation 1, then 2, each queued once, the first noting the newest', async () => {
    // Prepare
    const record = caseRecord();
    const first = await acceptAt(record, T0);
    // Act
    const second = await acceptAt(record, at(25 * HOUR));
    const third = await acceptAt(record, at(50 * HOUR));
    // Past the reconciler's due time: a repeat within it would queue an unmoved record again (lib/intake/unqueued.ts).
    const thirdAgain = await acceptAt(record, at(50 * HOUR + 10 * 60_000));
    // Assess
    expect([second, third, thirdAgain]).toEqual([
      generationId(first, 1),
      generationId(first, 2),
      generationId(first, 2),
    ]);
    expect(await queuedIds()).toEqual([first, second, third]);
    expect(await readContentSlot(first)).toMatchObject({ id: first, latestGeneration: 2 });
  });
});

describe('the first record outlives its newest generation', () => {
  it('is kept RECORD_RETENTION_DAYS after the newest generation, even when it settled long before', async () => {
    // Prepare: the first record settled at T0 and expires 400 days after; the content comes back 300 days on.
    const record = caseRecord();
    const first = await acceptAt(record, T0);
    const settledExpiry = Math.floor(T0.getTime() / 1000) + 400 * 86_400;
    await seedStatusRecords([
      {
        ...((await readContentSlot(first)) as StatusRecord),
        status: 'delivered',
        expiresAt: settledExpiry,
      },
    ]);
    const later = at(300 * 24 * HOUR);
    // Act
    const second = await acceptAt(record, later);
    // Assess: the first record, through which the duplicate check finds generation 1, now expires 400 days after
    // generation 1 was accepted (had it expired at T0 + 400 days, the same content sent on day 400 would have been
    // accepted again under the first id while generation 1 was in its 24 hours).
    expect(second).toBe(generationId(first, 1));
    expect(await readContentSlot(first)).toMatchObject({
      latestGeneration: 1,
      expiresAt: Math.floor(later.getTime() / 1000) + 400 * 86_400,
    });
  });
});

describe('a hint on the first record that is behind (its note was lost)', () => {
  it('finds the newest generation within 24 hours beyond the hint, and queues nothing', async () => {
    // Prepare: generations 1 and 2 exist; the first record notes only generation 1.
    const record = caseRecord();
    const firstRecord = { ...generationRecord(record, 0, T0), latestGeneration: 1 };
    await seedStatusRecords([
      firstRecord,
      generationRecord(record, 1, at(25 * HOUR)),
      generationRecord(record, 2, at(50 * HOUR)),
    ]);
    // Act
    // Past generation 2's due time (see above).
    const id = await acceptAt(record, at(50 * HOUR + 10 * 60_000));
    // Assess
    expect(id).toBe(generationId(firstRecord.id, 2));
    expect(await queuedIds()).toEqual([]);
  });

  it('creates the generation after the newest one when that one is older than 24 hours too', async () => {
    const record = caseRecord();
    const firstRecord = { ...generationRecord(record, 0, T0), latestGeneration: 1 };
    await seedStatusRecords([
      firstRecord,
      generationRecord(record, 1, at(25 * HOUR)),
      generationRecord(record, 2, at(50 * HOUR)),
    ]);
    const id = await acceptAt(record, at(75 * HOUR));
    expect(id).toBe(generationId(firstRecord.id, 3));
    expect(await queuedIds()).toEqual([id]);
    expect(await readContentSlot(firstRecord.id)).toMatchObject({ latestGeneration: 3 });
  });

  it('gives up after 8 generations in one request (a clock or data fault), creating none', async () => {
    // Prepare: generations 1 to 8 all older than 24 hours, the hint still at 0.
    const record = caseRecord();
    const firstRecord = generationRecord(record, 0, T0);
    await seedStatusRecords([
      firstRecord,
      ...Array.from({ length: 8 }, (_, i) => generationRecord(record, i + 1, at(i * HOUR))),
    ]);
    // Act
    const outcome = await acceptRecords({ ...request(record), now: at(40 * HOUR) }).catch(
      (error: Error) => error,
    );
    // Assess
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe(`content ${firstRecord.id}: no free generation within 8 tries`);
    expect(await readContentSlot(generationId(firstRecord.id, 9))).toBeUndefined();
    expect(await queuedIds()).toEqual([]);
  });
});

describe('a write whose answer was lost', () => {
  it('of a new generation: the request finds its own record, queues it once and notes it', async () => {
    // Prepare: the first PutItem (the first id, taken) goes through; the answer of the second (generation 1) is lost.
    const record = caseRecord();
    const first = await acceptAt(record, T0);
    await queuedIds();
    puts = 0;
    loseAnswerOfPut = 2;
    // Act
    const id = await acceptAt(record, at(25 * HOUR));
    // Assess
    expect(puts).toBeGreaterThanOrEqual(3);
    expect(id).toBe(generationId(first, 1));
    expect(await queuedIds()).toEqual([id]);
    expect(await readContentSlot(first)).toMatchObject({ latestGeneration: 1 });
  });

  it('is told from another request’s write by request id and time together', async () => {
    // Prepare: r1 accepts the content at T0.
    const record = caseRecord();
    const first = await acceptAt(record, T0, 'r1');
    await queuedIds();
    // Act: another request in the same millisecond, and the same request id at another time.
    const sameMoment = await acceptAt(record, T0, 'r2');
    const sameRequestId = await acceptAt(record, at(1000), 'r1');
    // Assess: both are duplicates, nothing queued again.
    expect([sameMoment, sameRequestId]).toEqual([first, first]);
    expect(await queuedIds()).toEqual([]);
  });
});
