/**
 * One content sent with and without an `Idempotency-Key`. The key decides for keyed requests; without a key, the
 * newest record of the content accepted in the last 24 hours is the record, keyed or not (the contract's 24-hour
 * rule). With the clock given: a keyed record on day 2 after a first record on day 0, several keys, a keyed
 * request that dies after naming its record. Then a keyed and an unkeyed request for fresh content racing, at
 * every DynamoDB call of either, paused there by a proxy in front of dynalite while the other runs.
 */
import { DynamoDBClient, PutItemCommand, type PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptRecords } from '../../lib/intake/acceptRecords.ts';
import { MAX_GENERATIONS_PER_REQUEST } from '../../lib/intake/constants.ts';
import { nameKeyedRecord } from '../../lib/intake/nameKeyedRecord.ts';
import { contentId, generationId, keyedId, sha256 } from '../../lib/intake/recordIds.ts';
import { getStatusRecord, putContentAliasIfAbsent, readContentSlot } from '../../lib/store/statusRecords.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { CONTENT_ID_KEY } from '../../testkit/apiKeys.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const OWNER = 'example-web-forms';
const HOUR = 60 * 60 * 1000;
const T0 = new Date('2026-11-20T08:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

let aws: Awaited<ReturnType<typeof isolatedAws>>;
/** The service's DynamoDB calls pass this proxy: a test may pause one there, or answer it with an error. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;
let requests = 0;

beforeAll(async () => {
  aws = await isolatedAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
});

afterAll(() => dynamo.stop());

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  dynamo.reset();
});

const caseRecord = (): CaseRecord => ({
  firstName: 'Kei',
  surname: 'Content',
  email: 'keyed.content@example.com',
  frameNo: uniqueFrame('KEYED'),
});
/** Accepts the record at `now`, under `key` if given, and returns its id. */
const send = async (record: CaseRecord, now: Date, key?: string) => {
  const [id] = await acceptRecords({
    kind: 'caseRecord',
    records: [record],
    requestId: `req-${++requests}`,
    owner: OWNER,
    idempotencyKey: key,
    now,
  });
  return id;
};
const firstIdOf = (record: CaseRecord) => contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER);
const keyedIdOf = (record: CaseRecord, key: string) => keyedId(sha256(`${OWNER}\n${key}`), firstIdOf(record));
const queuedIds = async () => (await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id);
/** Answers the service's write of the record `id` with an error (a 503 for its request); other writes go through. */
const failWriteOf = (id: string) => {
  dynamo.before('PutItem', (body) => {
    if ((body.Item as { pk: { S: string } }).pk.S === id) return { status: 400, type: 'ValidationException' };
    failWriteOf(id);
    return undefined;
  });
};

/**
 * The service's write of `id` lands, but its answer is lost: the write is made here, straight to dynalite, and the
 * service's call is answered as the AWS client's retry would be, by its own write (ConditionalCheckFailed).
 */
const loseAnswerOfWrite = (id: string) => {
  dynamo.before('PutItem', async (body) => {
    if ((body.Item as { pk: { S: string } }).pk.S !== id) {
      loseAnswerOfWrite(id);
      return undefined;
    }
    const direct = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
    await direct.send(new PutItemCommand(body as unknown as PutItemCommandInput));
    return { status: 400, type: 'ConditionalCheckFailedException' };
  });
};

describe('content sent without a key after a keyed record of it', () => {
  it('day 0 without a key, day 2 with one, an hour later without: the keyed record, not a third', async () => {
    // Prepare
    const record = caseRecord();
    const first = await send(record, T0);
    const keyed = await send(record, at(48 * HOUR), 'day-2');
    // Act
    const anHourLater = await send(record, at(49 * HOUR));
    // Assess
    expect(keyed).toBe(keyedIdOf(record, 'day-2'));
    expect(anHourLater).toBe(keyed);
    expect(await queuedIds()).toEqual([first, keyed]);
  });

  it('once the keyed record is 24 hours old: a new generation after it, queued once', async () => {
    // Prepare: the keyed record took the place of generation 1.
    const record = caseRecord();
    const first = await send(record, T0);
    const keyed = await send(record, at(48 * HOUR), 'day-2');
    await queuedIds();
    // Act
    const dayThree = await send(record, at(72 * HOUR));
    const dayThreeAgain = await send(record, at(73 * HOUR));
    // Assess
    expect(dayThree).not.toBe(keyed);
    expect(dayThree).toBe(generationId(first, 2));
    expect(dayThreeAgain).toBe(dayThree);
    expect(await queuedIds()).toEqual([dayThree]);
    expect(await readContentSlot(first)).toMatchObject({ id: first, latestGeneration: 2 });
  });

  it('two keys the same day: without a key, the newest keyed record', async () => {
    const record = caseRecord();
    await send(record, T0);
    await send(record, at(48 * HOUR), 'morning');
    const afternoon = await send(record, at(52 * HOUR), 'afternoon');
    const unkeyed = await send(record, at(53 * HOUR));
    expect(unkeyed).toBe(afternoon);
    expect(await queuedIds()).toHaveLength(3);
  });

  it('a key on fresh content, a second key, then none: the second keyed record', async () => {
    const record = caseRecord();
    const keyedFirst = await send(record, T0, 'one');
    const keyedSecond = await send(record, at(HOUR), 'two');
    const unkeyed = await send(record, at(2 * HOUR));
    expect(await readContentSlot(firstIdOf(record))).toMatchObject({
      aliasOf: keyedFirst,
      latestGeneration: 1,
    });
    expect(unkeyed).toBe(keyedSecond);
    expect(await queuedIds()).toEqual([keyedFirst, keyedSecond]);
  });

  it('the same key again (its request failed): no second place for the same record', async () => {
    // Prepare: the keyed request named its record at generation 1, then failed writing it (503).
    const record = caseRecord();
    const first = await send(record, T0);
    const keyed = keyedIdOf(record, 'retried');
    failWriteOf(keyed);
    const failed = await send(record, at(48 * HOUR), 'retried').catch((error: Error) => error);
    // Act
    const retried = await send(record, at(48 * HOUR + 60_000), 'retried');
    // Assess
    expect(failed).toMatchObject({ name: 'QueueUnavailableError' });
    expect(dynamo.pending()).toEqual([]);
    expect(retried).toBe(keyed);
    expect(await readContentSlot(generationId(first, 1))).toMatchObject({ aliasOf: keyed });
    expect(await readContentSlot(generationId(first, 2))).toBeUndefined();
    expect(await queuedIds()).toEqual([first, keyed]);
  });
});

describe('naming a keyed record at the next place', () => {
  it('takes a place whose alias write landed but lost its answer, not the one after', async () => {
    // Prepare: a record of the content on day 0; on day 2 the keyed alias's write at generation 1 loses its answer.
    const record = caseRecord();
    const first = await send(record, T0);
    loseAnswerOfWrite(generationId(first, 1));
    // Act
    const keyed = await send(record, at(48 * HOUR), 'answer-lost');
    const unkeyed = await send(record, at(49 * HOUR));
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(keyed).toBe(keyedIdOf(record, 'answer-lost'));
    expect(await readContentSlot(generationId(first, 1))).toMatchObject({ aliasOf: keyed });
    expect(await readContentSlot(generationId(first, 2))).toBeUndefined();
    expect(await readContentSlot(first)).toMatchObject({ latestGeneration: 1 });
    expect(unkeyed).toBe(keyed);
  });

  it('gives up after MAX_GENERATIONS_PER_REQUEST places taken by other keys, naming the content', async () => {
    // Prepare: the first id and the next eight places taken (their hint not noted, so every place is tried).
    const record = caseRecord();
    const first = await send(record, T0);
    const alias = { kind: 'caseRecord' as const, owner: OWNER, acceptedAt: at(48 * HOUR).toISOString() };
    for (let generation = 1; generation <= MAX_GENERATIONS_PER_REQUEST; generation++)
      await putContentAliasIfAbsent({
        ...alias,
        id: generationId(first, generation),
        aliasOf: `other-${generation}`,
      });
    // Act
    const named = nameKeyedRecord({ ...alias, id: first, aliasOf: 'mine' }, {});
    // Assess
    await expect(named).rejects.toThrow(`content ${first}: no free generation within 8 tries`);
    expect(await readContentSlot(generationId(first, MAX_GENERATIONS_PER_REQUEST + 1))).toBeUndefined();
  });
});

describe('a keyed request that named its record and failed before writing it', () => {
  it('a key on fresh content, its record write failed, the same key again: the alias at the first id stays its only place', async () => {
    // Prepare: the keyed request named its record at the content's first id, then failed writing it.
    const record = caseRecord();
    const keyed = keyedIdOf(record, 'fresh-retried');
    failWriteOf(keyed);
    const failed = await send(record, T0, 'fresh-retried').catch((error: Error) => error);
    // Act
    const retried = await send(record, at(60_000), 'fresh-retried');
    // Assess
    expect(failed).toMatchObject({ name: 'QueueUnavailableError' });
    expect(retried).toBe(keyed);
    expect(await readContentSlot(firstIdOf(record))).toMatchObject({ aliasOf: keyed });
    expect(await readContentSlot(generationId(firstIdOf(record), 1))).toBeUndefined();
    expect(await queuedIds()).toEqual([keyed]);
  });

  it('the unkeyed request’s write of that record lands but its answer is lost: still that record, queued once', async () => {
    // Prepare: the keyed request named its record and failed writing it; the unkeyed write's answer will be lost.
    const record = caseRecord();
    const keyed = keyedIdOf(record, 'lost-answer');
    failWriteOf(keyed);
    await send(record, T0, 'lost-answer').catch((error: Error) => error);
    loseAnswerOfWrite(keyed);
    // Act
    const unkeyed = await send(record, at(HOUR));
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(unkeyed).toBe(keyed);
    expect(await getStatusRecord(keyed)).toMatchObject({ status: 'accepted', record });
    expect(await queuedIds()).toEqual([keyed]);
  });

  it('the same content without a key within 24 hours writes that record and queues it, once', async () => {
    // Prepare: the keyed record's write is answered with an error (the request gets 503).
    const record = caseRecord();
    const keyed = keyedIdOf(record, 'lost');
    failWriteOf(keyed);
    const failed = await send(record, T0, 'lost').catch((error: Error) => error);
    // Act
    const unkeyed = await send(record, at(HOUR));
    const storedByUnkeyed = await getStatusRecord(keyed);
    const queuedByUnkeyed = await queuedIds();
    // Past the reconciler's due time: a repeat within it would queue the unmoved record again (lib/intake/unqueued.ts).
    const keyedRetry = await send(record, at(HOUR + 10 * 60_000), 'lost');
    // Assess: the unkeyed request stored and queued the record itself; the keyed retry got its id, queued nothing.
    expect(failed).toMatchObject({ name: 'QueueUnavailableError' });
    expect(dynamo.pending()).toEqual([]);
    expect(unkeyed).toBe(keyed);
    expect(storedByUnkeyed).toMatchObject({ id: keyed, status: 'accepted', record });
    expect(queuedByUnkeyed).toEqual([keyed]);
    expect(keyedRetry).toBe(keyed);
    expect(await queuedIds()).toEqual([]);
  });
});

/** The DynamoDB operations of one request run alone, in order. */
const soloCalls = async (run: () => Promise<unknown>) => {
  dynamo.reset();
  await run();
  return [...dynamo.calls];
};
/** Calls of `calls[index]`'s operation before it: the hook's `skip`. */
const skipOf = (calls: string[], index: number) =>
  calls.slice(0, index).filter((operation) => operation === calls[index]).length;

interface RaceOutcome {
  keyedId: string;
  unkeyedId: string;
  /**
   * One record is due: the keyed request had stored something (its record or an alias naming it) before the
   * unkeyed one wrote a record of its own.
   */
  oneRecordDue: boolean;
}

/** Whether the keyed request has stored its record, or an alias naming it at one of the content's places. */
const keyedKnown = async (record: CaseRecord, key: string) => {
  const keyed = keyedIdOf(record, key);
  const places = [0, 1, 2, 3].map((generation) => generationId(firstIdOf(record), generation));
  for (const place of places) {
    const slot = await readContentSlot(place);
    if (slot && 'aliasOf' in slot && slot.aliasOf === keyed) return true;
  }
  return (await getStatusRecord(keyed)) !== undefined;
};

/** Whether a request without a key has written a record of this content at `now` (at one of its places). */
const unkeyedWrote = async (record: CaseRecord, now: Date) => {
  const places = [0, 1, 2, 3].map((generation) => generationId(firstIdOf(record), generation));
  for (const place of places) {
    const slot = await readContentSlot(place);
    if (slot && !('aliasOf' in slot) && slot.acceptedAt === now.toISOString()) return true;
  }
  return false;
};

/** A race on fresh content, or on content whose only record was accepted two days before the race. */
const races = [
  { content: 'fresh content', raceAt: T0, acceptedBefore: undefined },
  { content: 'content first accepted two days before', raceAt: at(48 * HOUR), acceptedBefore: T0 },
];

describe.each(races)('a keyed and an unkeyed request for $content, racing', ({ raceAt, acceptedBefore }) => {
  /** New content, accepted without a key `acceptedBefore` if given; its message drained. */
  const contentToRace = async () => {
    const record = caseRecord();
    if (acceptedBefore) await send(record, acceptedBefore);
    await queuedIds();
    dynamo.reset();
    return record;
  };

  /**
   * What every interleaving must give: both answered with stored records, each record queued exactly once; one
   * record when the keyed request had stored anything before the unkeyed one wrote; two only when the unkeyed
   * request wrote a record of its own first (the key still decides), and then the keyed record is the newest: a
   * third request without a key gets it.
   */
  const expectOneRecordOrKeyedNewest = async (record: CaseRecord, key: string, outcome: RaceOutcome) => {
    const queued = await queuedIds();
    const ids = [...new Set([outcome.keyedId, outcome.unkeyedId])];
    expect(outcome.keyedId).toBe(keyedIdOf(record, key));
    for (const id of ids) expect(await getStatusRecord(id)).toMatchObject({ id, record });
    expect([...queued].sort()).toEqual([...ids].sort());
    if (outcome.oneRecordDue) expect(outcome.unkeyedId).toBe(outcome.keyedId);
    if (ids.length === 2) {
      expect(await send(record, raceAt)).toBe(outcome.keyedId);
      expect(await queuedIds()).toEqual([]);
    }
  };

  it('the keyed one paused before each of its DynamoDB calls while the unkeyed one runs: one record, or the keyed newest', async () => {
    // Prepare: the keyed request's calls when it runs alone.
    const keyedCalls = await soloCalls(async () => send(await contentToRace(), raceAt, 'solo'));
    const outcomes: RaceOutcome[] = [];
    for (const [index, operation] of keyedCalls.entries()) {
      const record = await contentToRace();
      const key = `paused-at-${index}`;
      let unkeyedId = '';
      let known = false;
      dynamo.before(
        operation,
        async () => {
          known = await keyedKnown(record, key);
          unkeyedId = await send(record, raceAt);
        },
        skipOf(keyedCalls, index),
      );
      // Act
      const keyed = await send(record, raceAt, key);
      // Assess
      expect(dynamo.pending()).toEqual([]);
      const outcome = { keyedId: keyed, unkeyedId, oneRecordDue: known };
      await expectOneRecordOrKeyedNewest(record, key, outcome);
      outcomes.push(outcome);
    }
    // Only while the keyed request had stored nothing of its own did the unkeyed one write a record of its own.
    expect(outcomes.some((o) => o.oneRecordDue)).toBe(true);
    for (const o of outcomes) expect(o.unkeyedId === o.keyedId).toBe(o.oneRecordDue);
  });

  it('the unkeyed one paused before each of its DynamoDB calls while the keyed one runs: one record, unless it had written', async () => {
    const unkeyedCalls = await soloCalls(async () => send(await contentToRace(), raceAt));
    for (const [index, operation] of unkeyedCalls.entries()) {
      const record = await contentToRace();
      const key = `overtaking-${index}`;
      let keyed = '';
      let wrote = false;
      dynamo.before(
        operation,
        async () => {
          wrote = await unkeyedWrote(record, raceAt);
          keyed = await send(record, raceAt, key);
        },
        skipOf(unkeyedCalls, index),
      );
      const unkeyedId = await send(record, raceAt);
      expect(dynamo.pending()).toEqual([]);
      await expectOneRecordOrKeyedNewest(record, key, { keyedId: keyed, unkeyedId, oneRecordDue: !wrote });
    }
  });

  it('the keyed one paused, the unkeyed one paused in turn at each of its calls while the keyed one finishes', async () => {
    // Prepare: for each pause of the keyed request, the calls the unkeyed one makes in it when it runs through.
    const keyedCalls = await soloCalls(async () => send(await contentToRace(), raceAt, 'solo'));
    let schedules = 0;
    for (const [keyedIndex, keyedOperation] of keyedCalls.entries()) {
      const unkeyedCalls: string[] = [];
      {
        const record = await contentToRace();
        dynamo.before(
          keyedOperation,
          async () => {
            const from = dynamo.calls.length;
            await send(record, raceAt);
            unkeyedCalls.push(...dynamo.calls.slice(from));
          },
          skipOf(keyedCalls, keyedIndex),
        );
        await send(record, raceAt, `learn-${keyedIndex}`);
      }
      for (const [unkeyedIndex, unkeyedOperation] of unkeyedCalls.entries()) {
        const record = await contentToRace();
        const key = `nested-${keyedIndex}-${unkeyedIndex}`;
        let known = false;
        let unkeyedWasPaused = false;
        let unkeyed: Promise<string> = Promise.resolve('');
        let keyedDone: () => void = () => undefined;
        const keyedFinished = new Promise<void>((resolve) => {
          keyedDone = resolve;
        });
        dynamo.before(
          keyedOperation,
          async () => {
            known = await keyedKnown(record, key);
            const unkeyedPaused = new Promise<void>((resolve) => {
              // Registered now, so that it counts the unkeyed request's calls only (the keyed one waits here).
              dynamo.before(
                unkeyedOperation,
                async () => {
                  unkeyedWasPaused = true;
                  resolve();
                  await keyedFinished;
                },
                skipOf(unkeyedCalls, unkeyedIndex),
              );
            });
            unkeyed = send(record, raceAt);
            await Promise.race([unkeyedPaused, unkeyed]);
            // Never paused (it took another path): its hook must not stop the keyed request.
            if (!unkeyedWasPaused) dynamo.reset();
          },
          skipOf(keyedCalls, keyedIndex),
        );
        // Act
        const keyed = await send(record, raceAt, key);
        keyedDone();
        const unkeyedId = await unkeyed;
        // Assess
        expect(unkeyedWasPaused).toBe(true);
        expect(dynamo.pending()).toEqual([]);
        await expectOneRecordOrKeyedNewest(record, key, { keyedId: keyed, unkeyedId, oneRecordDue: known });
        schedules++;
      }
    }
    expect(schedules).toBeGreaterThan(keyedCalls.length);
  });
});
