/**
 * Record events end to end below the bus: a settled outcome writes its event into the record's outbox in the same
 * write, the worker publishes it to the stack's bus (a real HTTP server answering PutEvents) and empties the
 * outbox; when the bus is down or refuses, nothing is lost: the reconciler's part publishes it once due. Against
 * dynalite, fauxqs and the SAP sandbox.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as reconcilerHandler } from '../../functions/reconciler.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { publishAfterOutcome, publishDueEvents, publishRecordEvents } from '../../lib/outbox/publish.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { QueuedRecord } from '../../lib/types.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { personalValues, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
let salesQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
  [sap, bus] = await Promise.all([startSapSandbox(), startEventBridgeRecorder()]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  resetDownstreamClients();
  salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
});

afterAll(async () => {
  await Promise.all([sap.stop(), bus.stop()]);
});

beforeEach(async () => {
  await aws.drain(salesQueue);
  bus.reset();
});

const NOW = new Date('2026-11-22T08:10:00.000Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/** A case (or, given `kind`, a sale) claimed and settled at NOW (its event in the outbox, not published). */
const settledCase = async (
  outcome: { status: 'delivered' | 'rejected' | 'failed'; error?: string },
  kind: StatusRecord['kind'] = 'caseRecord',
) => {
  const record = acceptedCase({
    attempts: 0,
    ...(kind === 'salesRegistration'
      ? {
          kind,
          statusKey: 'salesRegistration#accepted',
          openKind: kind,
          record: salesRegistrationInput({ FrameNum: uniqueFrame() }) as unknown as StatusRecord['record'],
        }
      : {}),
  });
  await seedStatusRecords([record]);
  const claim = await claimRecord(record.id, {
    now: NOW,
    leaseUntil: later(90).toISOString(),
  });
  if (!claim.claimed) throw new Error('not claimed');
  const written = await recordAttempt(
    claim.claimed,
    { ...outcome, attempts: 1, at: NOW, downstreamId: outcome.status === 'delivered' ? '500Ab' : undefined },
    later(90).toISOString(),
  );
  if (!written) throw new Error('not written');
  return written;
};

const outboxOf = async (id: string) => {
  const stored = (await getStatusRecord(id)) as StatusRecord;
  return { events: stored.pendingEvents, kind: stored.eventsKind, dueAt: stored.eventsDueAt };
};

/** A sale accepted through the handler, and its message as the SQS event source hands it to the worker. */
const acceptedSale = async (frameNum: string, changes: Record<string, unknown> = {}) => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: frameNum, ...changes })]),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  const out = await aws.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: salesQueue, MaxNumberOfMessages: 1, VisibilityTimeout: 60 }),
  );
  const [message] = out.Messages ?? [];
  const queued = JSON.parse(message.Body ?? '{}') as QueuedRecord;
  const sqsRecord = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ApproximateReceiveCount: '1' },
  } as unknown as SQSRecord;
  return { id: queued.id, sqsRecord };
};

const deliver = (sqsRecord: SQSRecord) =>
  deliverRecord(sqsRecord, {
    settings: { maxAttempts: 3, retryBaseSeconds: 10, leaseSeconds: 90 },
    log: logger,
    tally: new OutcomeTally(),
  });

describe('the worker publishes each settled outcome', () => {
  it('a sale SAP refuses (frame number registered twice): a rejected event with the reason, frame and dealer, nothing personal', async () => {
    // Prepare: the first sale of a frame is delivered; a second sale of the same frame is accepted.
    const frame = uniqueFrame('EVT');
    const first = await acceptedSale(frame);
    await deliver(first.sqsRecord);
    const second = await acceptedSale(frame, { SaleDate: '2026-11-21' });
    // Act
    await deliver(second.sqsRecord);
    // Assess: one event each, in order, on the stack's bus.
    expect(bus.entries.map((e) => [e.EventBusName, e.Source, e.DetailType])).toEqual([
      ['dealer-gateway-test', EVENT_SOURCE, RECORD_STATE_CHANGED],
      ['dealer-gateway-test', EVENT_SOURCE, RECORD_STATE_CHANGED],
    ]);
    const [delivered, rejected] = bus.details();
    expect(delivered).toMatchObject({ recordId: first.id, state: 'delivered', previousState: 'accepted' });
    expect(rejected).toEqual({
      eventId: expect.stringMatching(new RegExp(`^${second.id}:`)),
      recordId: second.id,
      kind: 'salesRegistration',
      client: 'example-dealer',
      state: 'rejected',
      previousState: 'accepted',
      attempts: 1,
      sequence: 1,
      at: expect.any(String),
      acceptedAt: expect.any(String),
      error: expect.stringContaining(`Frame number ${frame} is already registered`),
      FrameNum: frame,
      DealerId: 1234,
      // The record's trace context, carried on to the webhook posts (contract section 8)
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
    });
    // No personal value of the sales in anything sent to the bus.
    for (const body of bus.bodies) for (const value of personalValues) expect(body).not.toContain(value);
    // Published, so the outboxes are empty.
    expect(await outboxOf(second.id)).toEqual({ events: undefined, kind: undefined, dueAt: undefined });
    expect(await outboxOf(first.id)).toEqual({ events: undefined, kind: undefined, dueAt: undefined });
  });

  it('with the bus down, the delivery is still recorded at once and the event waits in the outbox', async () => {
    // Prepare
    bus.setMode('down');
    const sale = await acceptedSale(uniqueFrame('EVD'));
    // Act
    const startedAt = Date.now();
    await deliver(sale.sqsRecord);
    const tookMs = Date.now() - startedAt;
    // Assess: delivered; the event is kept, due for the reconciler a minute on.
    const stored = (await getStatusRecord(sale.id)) as StatusRecord;
    expect(stored.status).toBe('delivered');
    expect(stored.pendingEvents).toMatchObject([
      { state: 'delivered', previousState: 'accepted', attempts: 1 },
    ]);
    expect(stored.eventsKind).toBe('salesRegistration');
    expect(Date.parse(stored.eventsDueAt ?? '')).toBe(Date.parse(stored.updatedAt) + 60_000);
    expect(bus.entries).toEqual([]);
    // Bounded by the client's two short attempts, not by a timeout per record (loose: a loaded machine).
    expect(tookMs).toBeLessThan(8_000);
  });
});

describe('publishRecordEvents', () => {
  it('publishes the outbox and empties it', async () => {
    const record = await settledCase({ status: 'delivered' });
    expect(await publishRecordEvents(record)).toBe(1);
    expect(bus.details()).toEqual([
      {
        eventId: `${record.id}:${NOW.toISOString()}`,
        recordId: record.id,
        kind: 'caseRecord',
        client: 'example-web-forms',
        state: 'delivered',
        previousState: 'accepted',
        attempts: 1,
        sequence: 1,
        at: NOW.toISOString(),
        acceptedAt: record.acceptedAt,
        downstreamId: '500Ab',
      },
    ]);
    expect(await outboxOf(record.id)).toEqual({ events: undefined, kind: undefined, dueAt: undefined });
  });

  it('keeps the outbox when the bus refuses an entry', async () => {
    const record = await settledCase({ status: 'rejected', error: 'Invalid dealer' });
    bus.setMode('refuse-entries');
    await expect(publishRecordEvents(record)).rejects.toThrow('the event bus refused events');
    expect((await outboxOf(record.id)).events).toHaveLength(1);
  });

  it('keeps an event added after it read the outbox: it is published again with the next, same eventId', async () => {
    // Prepare: settled, then (as a redrive would) a second event joins the outbox before the first is cleared.
    const record = await settledCase({ status: 'delivered' });
    const stale = { ...record };
    const { UpdateItemCommand } = await import('../../lib/aws/jsonProtocol/dynamodb.ts');
    const { dynamoClient } = await import('../../lib/aws/clients.ts');
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: process.env.RECORDS_TABLE,
        Key: { pk: { S: record.id } },
        UpdateExpression: 'SET pendingEvents = list_append(pendingEvents, pendingEvents)',
      }),
    );
    // Act
    await publishRecordEvents(stale);
    // Assess: both stay, and the next publish sends both (the first a second time, with its eventId).
    const kept = (await outboxOf(record.id)).events ?? [];
    expect(kept).toHaveLength(2);
    await publishRecordEvents({ ...record, pendingEvents: kept });
    expect(bus.details().map((d) => d.eventId)).toEqual(Array(3).fill(`${record.id}:${NOW.toISOString()}`));
  });

  it('keeps an outbox of the same size but other changes: another publisher emptied it and a redrive added one', async () => {
    // Prepare: this publisher read the `failed` change; meanwhile another published and emptied the outbox, and a
    // redrive appended its `accepted` change, whose own publishing failed (the outbox has one entry again).
    const failed = await settledCase({ status: 'failed', error: 'HTTP 503' });
    const stale = { ...failed };
    const reopened = {
      state: 'accepted',
      previousState: 'failed',
      attempts: 1,
      at: later(60).toISOString(),
    } as const;
    await seedStatusRecords([{ ...failed, status: 'accepted', pendingEvents: [reopened] }]);
    // Act
    await publishRecordEvents(stale);
    // Assess: the `accepted` change was not cleared unpublished; the reconciler publishes it.
    expect((await outboxOf(failed.id)).events).toEqual([reopened]);
    await publishDueEvents({ now: later(3600), kinds: ['caseRecord'] });
    const ofThisRecord = bus.details().filter((d) => d.recordId === failed.id);
    expect(ofThisRecord.map((d) => [d.eventId, d.state])).toEqual([
      [`${failed.id}:${NOW.toISOString()}`, 'failed'],
      [`${failed.id}:${reopened.at}`, 'accepted'],
    ]);
  });
});

describe('publishAfterOutcome', () => {
  it('never throws; after a failure it leaves publishing to the reconciler for 30 s', async () => {
    const first = await settledCase({ status: 'delivered' });
    const second = await settledCase({ status: 'delivered' });
    bus.setMode('down');
    const t = Date.now() + 3_600_000; // a clock of its own, clear of other tests' pauses
    expect(await publishAfterOutcome(first, t)).toBe(false);
    bus.setMode('up');
    const callsBefore = bus.calls();
    expect(await publishAfterOutcome(second, t + 29_000)).toBe(false);
    expect(bus.calls()).toBe(callsBefore);
    expect(await publishAfterOutcome(second, t + 31_000)).toBe(true);
    expect(bus.details().map((d) => d.recordId)).toEqual([second.id]);
  });
});

describe('publishDueEvents (the reconciler)', () => {
  it('publishes what a worker left in outboxes once due, through the events index, and only then', async () => {
    // Prepare: two settled records whose worker never published (a crash after the write).
    const a = await settledCase({ status: 'delivered' });
    const b = await settledCase({ status: 'failed', error: 'HTTP 503' });
    // Act
    const early = await publishDueEvents({ now: later(59), kinds: ['caseRecord'] });
    const due = await publishDueEvents({ now: later(61), kinds: ['caseRecord'] });
    const again = await publishDueEvents({ now: later(120), kinds: ['caseRecord'] });
    // Assess
    expect(early).toEqual({ published: 0, unpublished: 0 });
    expect(due.published).toBeGreaterThanOrEqual(2);
    expect(again).toEqual({ published: 0, unpublished: 0 });
    const ids = bus.details().map((d) => d.recordId);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(bus.details().find((d) => d.recordId === b.id)).toMatchObject({
      state: 'failed',
      error: 'HTTP 503',
    });
  });

  it('publishes at most `limit` records a run; the next run takes the rest', async () => {
    // Prepare: three records left unpublished.
    const records = [
      await settledCase({ status: 'delivered' }),
      await settledCase({ status: 'delivered' }),
      await settledCase({ status: 'delivered' }),
    ];
    // Act
    const first = await publishDueEvents({ now: later(61), kinds: ['caseRecord'], limit: 2, pageSize: 1 });
    const second = await publishDueEvents({ now: later(61), kinds: ['caseRecord'], limit: 2 });
    // Assess
    expect(first).toEqual({ published: 2, unpublished: 0 });
    expect(second).toEqual({ published: 1, unpublished: 0 });
    expect(new Set(bus.details().map((d) => d.recordId))).toEqual(new Set(records.map((r) => r.id)));
  });

  it('counts the limit across both kinds: the cases get what the sales left of it', async () => {
    // Prepare: two sales and two cases left unpublished.
    const sales = [
      await settledCase({ status: 'delivered' }, 'salesRegistration'),
      await settledCase({ status: 'delivered' }, 'salesRegistration'),
    ];
    const cases = [await settledCase({ status: 'delivered' }), await settledCase({ status: 'delivered' })];
    // Act: sales first, then cases, three records in all.
    const first = await publishDueEvents({ now: later(61), limit: 3 });
    const published = bus.details().map((d) => d.recordId);
    const second = await publishDueEvents({ now: later(61), limit: 3 });
    // Assess
    expect(first).toEqual({ published: 3, unpublished: 0 });
    expect(published).toEqual(expect.arrayContaining(sales.map((r) => r.id)));
    expect(published.filter((id) => cases.some((r) => r.id === id))).toHaveLength(1);
    expect(second).toEqual({ published: 1, unpublished: 0 });
  });

  it('stops at the first failure while the bus is down, and publishes everything once it is back', async () => {
    // Prepare
    const records = [
      await settledCase({ status: 'delivered' }),
      await settledCase({ status: 'delivered' }),
      await settledCase({ status: 'delivered' }),
    ];
    bus.setMode('down');
    // Act
    const down = await publishDueEvents({ now: later(61), kinds: ['caseRecord'] });
    const callsWhileDown = bus.calls();
    bus.setMode('up');
    await publishDueEvents({ now: later(62), kinds: ['caseRecord'] });
    // Assess: one record tried (two attempts) while down; afterwards every record published.
    expect(down).toMatchObject({ published: 0, unpublished: 1 });
    expect(String(down.cause)).toMatch(/InternalException: down for a test/);
    expect(callsWhileDown).toBeLessThanOrEqual(2);
    const published = new Set(bus.details().map((d) => d.recordId));
    for (const record of records) expect(published.has(record.id)).toBe(true);
    for (const record of records) expect((await outboxOf(record.id)).events).toBeUndefined();
  });

  it('has the reconciler warn, with why, while pending events stay unpublished (and not once they go)', async () => {
    // Prepare: a case settled a week ago, its event still in the outbox; the bus down.
    const record = await settledCase({ status: 'delivered' });
    bus.setMode('down');
    const warn = vi.spyOn(logger, 'warn');
    try {
      // Act
      await reconcilerHandler();
      const whileDown = warn.mock.calls.filter(([message]) => message === 'pending events not published');
      bus.setMode('up');
      warn.mockClear();
      await reconcilerHandler();
      const afterwards = warn.mock.calls.filter(([message]) => message === 'pending events not published');
      // Assess
      expect(whileDown).toHaveLength(1);
      expect(whileDown[0][1]).toMatchObject({ published: 0, unpublished: 1, errorName: 'InternalException' });
      expect(JSON.stringify(whileDown[0][1])).not.toContain(record.id);
      expect(afterwards).toEqual([]);
      expect((await outboxOf(record.id)).events).toBeUndefined();
    } finally {
      bus.setMode('up');
      warn.mockRestore();
    }
  });
});
