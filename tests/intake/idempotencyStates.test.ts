/**
 * An Idempotency-Key through every state of its entry, with the clock given: answered from the entry once done,
 * taken over once its request failed (`retry`) or died (30 s), refused while another request holds it, and the
 * races between the calls of one request (the entry removed between the claim and the read, a rival taking the
 * key first). The races are run at a chosen DynamoDB call by a proxy in front of dynalite.
 */
import { DeleteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptRecords } from '../../lib/intake/acceptRecords.ts';
import { canonicalJson, contentId, keyedId, sha256 } from '../../lib/intake/recordIds.ts';
import type { IdempotencyState } from '../../lib/records/types.ts';
import {
  claimIdempotencyKey,
  idempotencyPk,
  readIdempotencyEntry,
  setIdempotencyState,
} from '../../lib/store/idempotencyEntries.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { CONTENT_ID_KEY } from '../../testkit/apiKeys.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const OWNER = 'example-web-forms';
const T0 = new Date('2026-11-22T08:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;
let sqsProxy: Awaited<ReturnType<typeof startFaultyProxy>>;
/** The tests' own client, straight to dynalite (not through the proxy or the code under test). */
let direct: DynamoDBClient;

beforeAll(async () => {
  aws = await isolatedAws();
  [dynamo, sqsProxy] = await Promise.all([
    startHookedProxy(aws.dynamoEndpoint),
    startFaultyProxy(aws.sqsEndpoint, 'SendMessageBatch'),
  ]);
  direct = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
});

afterAll(async () => {
  direct.destroy();
  await Promise.all([dynamo.stop(), sqsProxy.stop()]);
});

beforeEach(async () => {
  aws = await freshAws();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsProxy.endpoint,
  });
  dynamo.reset();
  sqsProxy.heal();
});

const caseRecord = (): CaseRecord => ({
  firstName: 'Kei',
  surname: 'Holder',
  email: 'key.holder@example.com',
  frameNo: uniqueFrame('IDEM'),
});
const keyHashOf = (key: string) => sha256(`${OWNER}\n${key}`);
/** Sends `records` under `key` at `now`. */
const sendKeyed = (records: CaseRecord[], key: string, now: Date) =>
  acceptRecords({
    kind: 'caseRecord',
    records,
    requestId: `req-${now.getTime()}`,
    owner: OWNER,
    idempotencyKey: key,
    now,
  });
/** The ids a request with this key and these records is answered. */
const idsFor = (records: CaseRecord[], key: string) =>
  records.map((record) => keyedId(keyHashOf(key), contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER)));
/** An entry as a request with this key and body that started at `startedAt` left it. */
const seedEntry = (records: CaseRecord[], key: string, state: IdempotencyState, startedAt: Date) =>
  claimIdempotencyKey(
    {
      kind: 'caseRecord',
      keyHash: keyHashOf(key),
      bodyHash: sha256(canonicalJson(records)),
      state,
      startedAt: startedAt.toISOString(),
      expiresAt: Math.floor(startedAt.getTime() / 1000) + 24 * 60 * 60,
      contentIds: 'keyed',
    },
    Math.floor(startedAt.getTime() / 1000),
  );
const entryOf = (key: string) => readIdempotencyEntry('caseRecord', keyHashOf(key));
const queuedIds = async () => (await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id).sort();
const refusal = (outcome: Promise<unknown>) =>
  outcome.then(
    () => 'answered 200',
    (error: Error) => error.name,
  );

describe('a key answered 200 before', () => {
  it('is answered the same ids from its entry: no write, the entry left as it was', async () => {
    // Prepare
    const records = [caseRecord(), caseRecord()];
    const first = await sendKeyed(records, 'done-1', T0);
    await queuedIds();
    dynamo.reset();
    // Act
    const repeat = await sendKeyed(records, 'done-1', at(5_000));
    // Assess
    expect(repeat).toEqual(first);
    expect(dynamo.calls).toEqual(['PutItem', 'GetItem']);
    expect(await entryOf('done-1')).toMatchObject({ state: 'done', startedAt: T0.toISOString() });
    expect(await queuedIds()).toEqual([]);
  });
});

describe('a key whose request failed or died', () => {
  it('after a failure, the entry says retry', async () => {
    // Prepare: SQS refuses the request's messages.
    const records = [caseRecord()];
    sqsProxy.failAfter(0);
    // Act
    const outcome = await sendKeyed(records, 'failed-1', T0).catch((error: Error) => error);
    // Assess
    expect(outcome).toMatchObject({
      name: 'QueueUnavailableError',
      message: '1 record(s) could not be queued',
    });
    expect(await entryOf('failed-1')).toMatchObject({ state: 'retry', startedAt: T0.toISOString() });
  });

  it('held 30 s is taken over; 1 ms before that, it is still being processed (409)', async () => {
    // Prepare: a request started at T0 and never finished.
    const records = [caseRecord()];
    await seedEntry(records, 'died-1', 'started', T0);
    // Act
    const early = await refusal(sendKeyed(records, 'died-1', at(30_000 - 1)));
    const ids = await sendKeyed(records, 'died-1', at(30_000));
    // Assess
    expect(early).toBe('IdempotencyInProgressError');
    expect(ids).toEqual(idsFor(records, 'died-1'));
    expect(await queuedIds()).toEqual(ids);
    expect(await entryOf('died-1')).toMatchObject({ state: 'done', startedAt: at(30_000).toISOString() });
  });

  it('is refused (409) when another retry takes it over first', async () => {
    // Prepare: a failed request's entry; a rival retry takes the key over just before this one does.
    const records = [caseRecord()];
    await seedEntry(records, 'rival-1', 'retry', T0);
    dynamo.before('UpdateItem', async () => {
      const taken = await setIdempotencyState('caseRecord', keyHashOf('rival-1'), {
        heldSince: T0.toISOString(),
        state: 'started',
        startedAt: at(4_000).toISOString(),
      });
      expect(taken).toBe(true);
    });
    // Act
    const outcome = await refusal(sendKeyed(records, 'rival-1', at(5_000)));
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(outcome).toBe('IdempotencyInProgressError');
    expect(await queuedIds()).toEqual([]);
    expect(await entryOf('rival-1')).toMatchObject({ state: 'started', startedAt: at(4_000).toISOString() });
  });

  it('while one retry works on a key it took over, another is refused (409)', async () => {
    // Prepare: a failed request's entry; retry A takes it over; retry B arrives while A stores its records.
    const records = [caseRecord()];
    await seedEntry(records, 'takeover-1', 'retry', T0);
    let whileRunning: string | undefined;
    dynamo.before(
      'PutItem',
      async () => {
        whileRunning = await refusal(sendKeyed(records, 'takeover-1', at(6_000)));
      },
      1,
    );
    // Act
    const ids = await sendKeyed(records, 'takeover-1', at(5_000));
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(whileRunning).toBe('IdempotencyInProgressError');
    expect(await queuedIds()).toEqual(ids);
  });
});

describe('the entry changing between the claim and the read', () => {
  const deleteEntry = (key: string) =>
    direct.send(
      new DeleteItemCommand({
        TableName: aws.resources.tables.RecordsTable.name,
        Key: { pk: { S: idempotencyPk('caseRecord', keyHashOf(key)) } },
      }),
    );

  it('removed (expired) after the claim met it: a second claim takes the key', async () => {
    // Prepare: a live entry of a running request, removed just after this request's claim met it.
    const records = [caseRecord()];
    await seedEntry(records, 'gone-1', 'started', T0);
    dynamo.before('GetItem', async () => {
      await deleteEntry('gone-1');
    });
    // Act
    const ids = await sendKeyed(records, 'gone-1', at(1_000));
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(ids).toEqual(idsFor(records, 'gone-1'));
    expect(await queuedIds()).toEqual(ids);
    expect(await entryOf('gone-1')).toMatchObject({ state: 'done', startedAt: at(1_000).toISOString() });
  });

  it('removed, then claimed by another request first: 409', async () => {
    const records = [caseRecord()];
    await seedEntry(records, 'gone-2', 'started', T0);
    dynamo.before('GetItem', async () => {
      await deleteEntry('gone-2');
      // The next PutItem is this request's second claim: another request claims the key just before it.
      dynamo.before('PutItem', async () => {
        expect(await seedEntry(records, 'gone-2', 'started', at(900))).toBe(true);
      });
    });
    const outcome = await refusal(sendKeyed(records, 'gone-2', at(1_000)));
    expect(dynamo.pending()).toEqual([]);
    expect(outcome).toBe('IdempotencyInProgressError');
    expect(await queuedIds()).toEqual([]);
  });
});

describe('the clean-up writes', () => {
  it('a failed "done" write does not fail a request whose records are stored and queued', async () => {
    const records = [caseRecord()];
    dynamo.before('UpdateItem', () => ({
      status: 400,
      type: 'com.amazonaws.dynamodb.v20120810#ValidationException',
    }));
    const ids = await sendKeyed(records, 'complete-1', T0);
    expect(dynamo.pending()).toEqual([]);
    expect(ids).toEqual(idsFor(records, 'complete-1'));
    expect(await queuedIds()).toEqual(ids);
  });

  it('a failed "retry" write leaves the request failing with its own error', async () => {
    const records = [caseRecord()];
    sqsProxy.failAfter(0);
    dynamo.before('UpdateItem', () => ({
      status: 400,
      type: 'com.amazonaws.dynamodb.v20120810#ValidationException',
    }));
    const outcome = await sendKeyed(records, 'release-1', T0).catch((error: Error) => error);
    expect(dynamo.pending()).toEqual([]);
    expect(outcome).toMatchObject({
      name: 'QueueUnavailableError',
      message: '1 record(s) could not be queued',
    });
  });

  it('get a second of their own: a DynamoDB that hangs does not hold the answer', async () => {
    // Prepare: SQS refuses the messages; the "retry" write then meets a DynamoDB that does not answer for 5 s.
    const records = [caseRecord()];
    sqsProxy.failAfter(0);
    for (let attempt = 0; attempt < 3; attempt++)
      dynamo.before('UpdateItem', async () => {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      });
    const started = performance.now();
    // Act
    const outcome = await sendKeyed(records, 'hang-1', T0).catch((error: Error) => error);
    const tookMs = performance.now() - started;
    // Assess: SQS's retries and the one second of the clean-up, not the clean-up's own retries (3 x 2 s).
    expect(outcome).toMatchObject({
      name: 'QueueUnavailableError',
      message: '1 record(s) could not be queued',
    });
    expect(tookMs).toBeLessThan(4_000);
  });
});

describe('failures of AWS', () => {
  it('a DynamoDB that keeps failing: 503 (QueueUnavailableError) carrying what AWS answered', async () => {
    // Prepare: every attempt of the first write answers 500.
    for (let attempt = 0; attempt < 3; attempt++)
      dynamo.before('PutItem', () => ({
        status: 500,
        type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
      }));
    // Act
    const outcome = await acceptRecords({
      kind: 'caseRecord',
      records: [caseRecord()],
      requestId: 'r',
      owner: OWNER,
      now: T0,
    }).catch((error: Error) => error);
    // Assess
    expect(outcome).toMatchObject({
      name: 'QueueUnavailableError',
      message: 'the records could not be stored and queued in time',
      cause: expect.objectContaining({ name: 'InternalServerError', $metadata: expect.any(Object) }),
    });
  });
});
