/**
 * Publishing at its edges: an outbox of exactly 10 and of 11 events (PutEvents takes at most 10 a call), an empty
 * outbox, the end of the worker's 30 s pause after a bus failure, the reconciler's part with its defaults (both
 * kinds, pages of 100), more due records than one page, and its consistent reads. Against dynalite behind a proxy
 * that records the service's calls, and a real HTTP server answering PutEvents; a table of its own for each test.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { publishAfterOutcome, publishDueEvents, publishRecordEvents } from '../../lib/outbox/publish.ts';
import type { PendingEvent, StatusRecord } from '../../lib/records/types.ts';
import { eventBusName } from '../../lib/settings/settings.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { RecordKind } from '../../lib/types.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
/** The service's DynamoDB calls pass this proxy, which records them. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

beforeAll(async () => {
  aws = await isolatedAws();
  [bus, dynamo] = await Promise.all([startEventBridgeRecorder(), startHookedProxy(aws.dynamoEndpoint)]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
});

afterAll(async () => {
  await Promise.all([bus.stop(), dynamo.stop()]);
});

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  bus.reset();
  dynamo.reset();
});

const NOW = new Date('2026-11-22T08:10:00.000Z');

/** `count` changes of state, a second apart, as a record's outbox keeps them. */
const pendingEvents = (count: number): PendingEvent[] =>
  Array.from({ length: count }, (_, i) => ({
    state: i % 2 === 0 ? 'failed' : 'accepted',
    previousState: i % 2 === 0 ? 'accepted' : 'failed',
    attempts: 1,
    at: new Date(NOW.getTime() + i * 1000).toISOString(),
    ...(i % 2 === 0 ? { error: 'HTTP 503' } : {}),
  }));

/** A settled record of a kind with `count` events in its outbox, due for the reconciler at NOW. */
const withOutbox = (count: number, kind: RecordKind = 'caseRecord'): StatusRecord =>
  acceptedCase({
    kind,
    status: 'failed',
    statusKey: `${kind}#failed`,
    openKind: undefined,
    dueAt: undefined,
    attempts: 1,
    ...(kind === 'salesRegistration'
      ? {
          owner: 'example-dealer',
          record: {
            ...salesRegistrationInput({ FrameNum: uniqueFrame('EDG') }),
            DealerId: 1234,
          } as StatusRecord['record'],
        }
      : {}),
    pendingEvents: pendingEvents(count),
    eventsKind: kind,
    eventsDueAt: NOW.toISOString(),
  });

/** The number of entries in each PutEvents call the bus took. */
const entriesPerCall = () =>
  bus.bodies.map((body) => (JSON.parse(body) as { Entries: unknown[] }).Entries.length);

describe('publishRecordEvents', () => {
  it('sends an outbox of exactly 10 events in one call', async () => {
    // Prepare
    const record = withOutbox(10);
    await seedStatusRecords([record]);
    // Act
    const published = await publishRecordEvents(record);
    // Assess
    expect(published).toBe(10);
    expect(entriesPerCall()).toEqual([10]);
    expect((await getStatusRecord(record.id))?.pendingEvents).toBeUndefined();
  });

  it('sends an outbox of 11 events in two calls, 10 and 1, in order', async () => {
    // Prepare
    const record = withOutbox(11);
    await seedStatusRecords([record]);
    // Act
    const published = await publishRecordEvents(record);
    // Assess
    expect(published).toBe(11);
    expect(entriesPerCall()).toEqual([10, 1]);
    expect(bus.details().map((detail) => detail.at)).toEqual(pendingEvents(11).map((pending) => pending.at));
    expect((await getStatusRecord(record.id))?.pendingEvents).toBeUndefined();
  });

  it('empties an outbox of 60 events with a condition DynamoDB takes (under 4 KB: it compares the first 25)', async () => {
    // Prepare
    const record = withOutbox(60);
    await seedStatusRecords([record]);
    dynamo.reset();
    // Act
    const published = await publishRecordEvents(record);
    // Assess
    expect(published).toBe(60);
    expect((await getStatusRecord(record.id))?.pendingEvents).toBeUndefined();
    // The record's own update (the others write its feed entries).
    const [clear] = dynamo.requests.filter(
      (call) =>
        call.operation === 'UpdateItem' &&
        JSON.stringify(call.body.Key) === JSON.stringify({ pk: { S: record.id } }),
    );
    const condition = String(clear.body.ConditionExpression);
    expect(condition.length).toBeLessThan(4096);
    expect(condition).toContain('size(pendingEvents) = :published');
    expect(condition).toContain('pendingEvents[24].#at = :at24');
    expect(condition).not.toContain('pendingEvents[25]');
  });

  it('with no outbox: publishes nothing and writes nothing', async () => {
    // Prepare
    const record = acceptedCase({ status: 'delivered', statusKey: 'caseRecord#delivered' });
    await seedStatusRecords([record]);
    dynamo.reset();
    // Act
    const published = await publishRecordEvents(record);
    // Assess
    expect(published).toBe(0);
    expect(bus.calls()).toBe(0);
    expect(dynamo.calls).toEqual([]);
  });
});

describe('publishAfterOutcome', () => {
  it('tries again once the 30 s after a bus failure are over, not a millisecond later', async () => {
    // Prepare: the bus fails a worker at t.
    const [first, second] = [withOutbox(1), withOutbox(1)];
    await seedStatusRecords([first, second]);
    const t = Date.now() + 7_200_000; // a clock of its own, clear of other files' pauses
    bus.setMode('down');
    expect(await publishAfterOutcome(first, t)).toBe(false);
    bus.setMode('up');
    // Act
    const atEnd = await publishAfterOutcome(second, t + 30_000);
    // Assess
    expect(atEnd).toBe(true);
    expect(bus.details().map((detail) => detail.recordId)).toEqual([second.id]);
  });
});

describe('publishDueEvents (the reconciler)', () => {
  it('publishes the due events of both kinds when no kind is given, a page of 100 at a time', async () => {
    // Prepare
    const [sale, caseRecord] = [withOutbox(1, 'salesRegistration'), withOutbox(1, 'caseRecord')];
    await seedStatusRecords([sale, caseRecord]);
    dynamo.reset();
    // Act
    const result = await publishDueEvents({ now: NOW });
    // Assess
    expect(result).toEqual({ published: 2, unpublished: 0 });
    expect(bus.details().map((detail) => [detail.recordId, detail.kind])).toEqual([
      [sale.id, 'salesRegistration'],
      [caseRecord.id, 'caseRecord'],
    ]);
    const queries = dynamo.requests.filter((call) => call.operation === 'Query');
    expect(queries.map((query) => query.body.Limit)).toEqual([100, 100]);
  });

  it('reads every page of the events index', async () => {
    // Prepare: three due records, pages of one.
    const records = [withOutbox(1), withOutbox(1), withOutbox(1)];
    await seedStatusRecords(records);
    dynamo.reset();
    // Act
    const result = await publishDueEvents({ now: NOW, kinds: ['caseRecord'], pageSize: 1 });
    // Assess
    expect(result).toEqual({ published: 3, unpublished: 0 });
    expect(new Set(bus.details().map((detail) => detail.recordId))).toEqual(
      new Set(records.map((r) => r.id)),
    );
    const queries = dynamo.requests.filter((call) => call.operation === 'Query');
    expect(queries.length).toBeGreaterThanOrEqual(3);
    expect(queries.every((query) => query.body.Limit === 1)).toBe(true);
  });

  it('reads the records it found in the index consistently (the index may be older than the record)', async () => {
    // Prepare
    await seedStatusRecords([withOutbox(1)]);
    dynamo.reset();
    // Act
    await publishDueEvents({ now: NOW, kinds: ['caseRecord'] });
    // Assess
    const reads = dynamo.requests.filter((call) => call.operation === 'BatchGetItem');
    expect(reads).toHaveLength(1);
    const requestItems = reads[0].body.RequestItems as Record<string, { ConsistentRead?: boolean }>;
    expect(Object.values(requestItems).map((table) => table.ConsistentRead)).toEqual([true]);
  });
});

describe('eventBusName', () => {
  it('names EVENT_BUS_NAME when it is not set', () => {
    expect(() => eventBusName({})).toThrow('setting EVENT_BUS_NAME is not set');
    expect(eventBusName({ EVENT_BUS_NAME: 'dealer-gateway-dev' })).toBe('dealer-gateway-dev');
  });
});
