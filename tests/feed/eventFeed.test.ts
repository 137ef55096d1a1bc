/**
 * The event feed (GET /events, docs/behaviour.md#webhooks-and-the-event-feed) against dynalite: entries written as the publisher writes them
 * (lib/feed/feedEntries.ts, with an injected clock where a test needs old or late entries), read through the
 * deployed handler (functions/eventFeed.ts) or, where the clock matters, through feedRequest with an injected one.
 * Each test dates its entries in a period of its own, so tests sharing the table never see each other's entries.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/eventFeed.ts';
import { clientNamed } from '../../lib/clients/clientsConfig.ts';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import { FEED_SETTLE_MS, FEED_WINDOW_MS } from '../../lib/feed/constants.ts';
import { cursorOf } from '../../lib/feed/feedCursor.ts';
import { putFeedEntries } from '../../lib/feed/feedEntries.ts';
import { feedKeyOf } from '../../lib/feed/feedKey.ts';
import { feedRequest } from '../../lib/feed/feedRequest.ts';
import type { CallerContext } from '../../lib/http/callerIdentity.ts';
import { RequestRefusedError } from '../../lib/http/errors.ts';
import { publishRecordEvents } from '../../lib/outbox/publish.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt, reopenFailedRecord } from '../../lib/store/statusUpdates.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { apiEvent, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const DEALER = 'example-dealer';
const WEB_FORMS = 'example-web-forms';
const DAY = 24 * 60 * 60 * 1000;

let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;

beforeAll(async () => {
  await isolatedAws();
  bus = await startEventBridgeRecorder();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
});

afterAll(async () => {
  await bus.stop();
});

/** A period of its own for each test: far enough apart that one's 30-day window never holds another's entries. */
let periods = 0;
const period = () => new Date(Date.UTC(2031, 0, 1) + periods++ * 90 * DAY);
const plus = (from: Date, ms: number) => new Date(from.getTime() + ms);

/** A change of a fresh record of `owner`, at `at`. */
const changeOf = (owner: string, at: Date, state: 'delivered' | 'failed' = 'delivered'): RecordStateChanged =>
  stateChangeOf(acceptedCase({ owner }), {
    state,
    attempts: 1,
    at,
    ...(state === 'delivered' ? { downstreamId: '500Ab' } : { error: 'Salesforce answered 503' }),
  });

/** Publishes changes to the feed as if at `publishedAt`, each a millisecond after the one before. */
const published = async (changes: RecordStateChanged[], publishedAt: Date) => {
  for (const [i, change] of changes.entries()) {
    const at = publishedAt.getTime() + i;
    await putFeedEntries([change], () => at);
  }
};

/** The context callerIdentity gives a request with this client's key. */
const callerContext = (client: string): CallerContext => {
  const known = clientNamed(client);
  if (!known) throw new Error(`no client ${client}`);
  return { ...lambdaContext(), caller: { kind: 'client', client: known } };
};

const feedEvent = (query: Record<string, string> = {}, key: string | null = testKeys.dealer) =>
  apiEvent({
    path: '/events',
    resource: '/events',
    httpMethod: 'GET',
    headers: key === null ? {} : { 'x-api-key': key },
    queryStringParameters: Object.keys(query).length > 0 ? query : null,
    multiValueQueryStringParameters:
      Object.keys(query).length > 0
        ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]]))
        : null,
  });

const parsed = (answer: APIGatewayProxyResult) => ({
  status: answer.statusCode,
  body: JSON.parse(answer.body),
});

/** A page of `client`'s feed as read at `now`; a refusal as the handler answers it. */
const pageAt = async (client: string, now: Date, query: Record<string, string> = {}) => {
  try {
    return parsed(await feedRequest(feedEvent(query), callerContext(client), () => now));
  } catch (error) {
    if (!(error instanceof RequestRefusedError)) throw error;
    return { status: error.statusCode, body: { message: error.message } };
  }
};

/** Every page from `cursor` on, as read at `now`: the events' ids in order, and the pages read. */
const allPages = async (client: string, now: Date, limit: number) => {
  const ids: string[] = [];
  const sizes: number[] = [];
  let next: string | null | undefined;
  do {
    const { status, body } = await pageAt(client, now, {
      limit: String(limit),
      ...(next ? { after: next } : {}),
    });
    expect(status).toBe(200);
    ids.push(...body.events.map((e: { id: string }) => e.id));
    sizes.push(body.events.length);
    next = body.next;
  } while (next);
  return { ids, sizes };
};

describe('GET /events through the handler', () => {
  it("answers the caller's own events, oldest first, in the contract's shape, and nothing of another client", async () => {
    // Prepare: events of both clients, published a little before now (older than the settle delay).
    const publishedAt = new Date(Date.now() - 2 * FEED_SETTLE_MS);
    const dealer = [changeOf(DEALER, publishedAt), changeOf(DEALER, publishedAt, 'failed')];
    const forms = [changeOf(WEB_FORMS, publishedAt)];
    await published([dealer[0], forms[0], dealer[1]], publishedAt);
    // Act
    const dealerPage = parsed(await handler(feedEvent({}, testKeys.dealer), lambdaContext()));
    const formsPage = parsed(await handler(feedEvent({}, testKeys.webForms), lambdaContext()));
    // Assess
    expect(dealerPage.status).toBe(200);
    expect(dealerPage.body).toEqual({
      events: [
        {
          id: dealer[0].eventId,
          type: 'record.delivered',
          timestamp: dealer[0].at,
          data: {
            recordId: dealer[0].recordId,
            kind: 'caseRecord',
            state: 'delivered',
            previousState: 'accepted',
            attempts: 1,
            sequence: 1,
            downstreamId: '500Ab',
          },
        },
        {
          id: dealer[1].eventId,
          type: 'record.failed',
          timestamp: dealer[1].at,
          data: expect.objectContaining({ state: 'failed', error: 'Salesforce answered 503', sequence: 1 }),
        },
      ],
      next: null,
    });
    // The contract's order of fields, as the webhooks send them.
    expect(Object.keys(dealerPage.body.events[0])).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(formsPage.body.events.map((e: { id: string }) => e.id)).toEqual([forms[0].eventId]);
  });

  it('refuses a request without a key or with an unknown key (403), as the status look-ups do', async () => {
    // Act
    const without = parsed(await handler(feedEvent({}, null), lambdaContext()));
    const unknown = parsed(await handler(feedEvent({}, 'not-a-key'), lambdaContext()));
    const form = parsed(
      await handler(
        { ...feedEvent({}, null), headers: { origin: 'https://www.example.com' } },
        lambdaContext(),
      ),
    );
    // Assess
    expect([without.status, unknown.status, form.status]).toEqual([403, 403, 403]);
    expect(without.body).toEqual({ message: expect.stringContaining('x-api-key') });
  });

  it('refuses a limit out of 1-100, not a whole number, or repeated (400 naming limit), never 500', async () => {
    // Act
    const answers = await Promise.all(
      ['0', '101', '-1', '1.5', 'ten', '', '1e2', ' 5'].map(async (limit) =>
        parsed(await handler(feedEvent({ limit }), lambdaContext())),
      ),
    );
    const repeated = parsed(
      await handler(
        { ...feedEvent({ limit: '5' }), multiValueQueryStringParameters: { limit: ['5', '6'] } },
        lambdaContext(),
      ),
    );
    const edges = await Promise.all(
      ['1', '100'].map(async (limit) => parsed(await handler(feedEvent({ limit }), lambdaContext()))),
    );
    // Assess
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 400,
        body: { message: 'limit must be a whole number from 1 to 100' },
      });
    }
    expect(repeated).toEqual({ status: 400, body: { message: 'limit must be a single value' } });
    expect(edges.map((answer) => answer.status)).toEqual([200, 200]);
  });

  it("refuses a malformed cursor, another client's and an expired one (400 naming after), never 500", async () => {
    // Prepare: a real cursor of the web forms' client, and cursors beyond the window or made up.
    const publishedAt = new Date(Date.now() - 2 * FEED_SETTLE_MS);
    const forms = [changeOf(WEB_FORMS, publishedAt), changeOf(WEB_FORMS, publishedAt)];
    await published(forms, publishedAt);
    const formsPage = parsed(await handler(feedEvent({ limit: '1' }, testKeys.webForms), lambdaContext()));
    const foreign = formsPage.body.next as string;
    const expired = cursorOf(
      DEALER,
      feedKeyOf(new Date(Date.now() - FEED_WINDOW_MS - DAY), forms[0].eventId),
    );
    const malformed = [
      'not a cursor!',
      'abc',
      Buffer.from('{"c":"example-dealer"}').toString('base64url'),
      Buffer.from('{"c":"example-dealer","k":"yesterday"}').toString('base64url'),
      cursorOf(DEALER, feedKeyOf(new Date(Date.now() + DAY), forms[0].eventId)),
      'A'.repeat(2000),
      '',
    ];
    // Act
    const foreignAnswer = parsed(await handler(feedEvent({ after: foreign }), lambdaContext()));
    const expiredAnswer = parsed(await handler(feedEvent({ after: expired }), lambdaContext()));
    const malformedAnswers = await Promise.all(
      malformed.map(async (after) => parsed(await handler(feedEvent({ after }), lambdaContext()))),
    );
    // Assess: the web forms' client's own cursor works for it, and only for it.
    expect(formsPage.status).toBe(200);
    expect(foreign).toEqual(expect.any(String));
    expect(foreignAnswer).toEqual({
      status: 400,
      body: { message: 'after must be a cursor given to this client' },
    });
    expect(expiredAnswer).toEqual({
      status: 400,
      body: { message: expect.stringMatching(/^after is an expired cursor: the feed reaches 30 days back/) },
    });
    for (const answer of malformedAnswers) {
      expect(answer).toEqual({
        status: 400,
        body: { message: 'after must be a cursor this feed gave (the "next" of an earlier page)' },
      });
    }
  });
});

describe('paging, the window and the settle delay (feedRequest, clock injected)', () => {
  it('pages through more entries than a page holds with the cursor, each once, oldest first, next null at the end', async () => {
    // Prepare: 7 entries of the dealer, 3 of the web forms' client interleaved.
    const start = period();
    const dealer = Array.from({ length: 7 }, (_, i) => changeOf(DEALER, plus(start, i)));
    const forms = Array.from({ length: 3 }, (_, i) => changeOf(WEB_FORMS, plus(start, i)));
    await published([...dealer.slice(0, 3), ...forms, ...dealer.slice(3)], start);
    const now = plus(start, FEED_SETTLE_MS + 1000);
    // Act
    const paged = await allPages(DEALER, now, 3);
    const exact = await allPages(DEALER, now, 7);
    // Assess: 3 + 3 + 1, and a full last page is the last (next null, no empty page after it).
    expect(paged.ids).toEqual(dealer.map((e) => e.eventId));
    expect(paged.sizes).toEqual([3, 3, 1]);
    expect(exact.sizes).toEqual([7]);
  });

  it('reaches 30 days back: older entries are not listed, and a cursor older than that is expired', async () => {
    // Prepare: one entry 31 days before now, one 29 days before.
    const now = period();
    const old = changeOf(DEALER, plus(now, -31 * DAY));
    const recent = changeOf(DEALER, plus(now, -29 * DAY));
    await published([old], plus(now, -31 * DAY));
    await published([recent], plus(now, -29 * DAY));
    const oldCursor = cursorOf(DEALER, feedKeyOf(plus(now, -31 * DAY), old.eventId));
    const recentCursor = cursorOf(DEALER, feedKeyOf(plus(now, -29 * DAY), recent.eventId));
    // Act
    const page = await pageAt(DEALER, now);
    const fromOld = await pageAt(DEALER, now, { after: oldCursor });
    const fromRecent = await pageAt(DEALER, now, { after: recentCursor });
    const twoDaysEarlier = await pageAt(DEALER, plus(now, -2 * DAY));
    // Assess
    expect(page.body.events.map((e: { id: string }) => e.id)).toEqual([recent.eventId]);
    expect(fromOld.status).toBe(400);
    expect(fromOld.body.message).toMatch(/expired/);
    expect(fromRecent.body).toEqual({ events: [], next: null });
    expect(twoDaysEarlier.body.events.map((e: { id: string }) => e.id)).toEqual([
      old.eventId,
      recent.eventId,
    ]);
  });

  it('serves an entry only once it is older than the settle delay', async () => {
    // Prepare
    const start = period();
    const change = changeOf(DEALER, start);
    await published([change], start);
    // Act
    const tooSoon = await pageAt(DEALER, plus(start, FEED_SETTLE_MS - 1));
    const settled = await pageAt(DEALER, plus(start, FEED_SETTLE_MS));
    // Assess
    expect(tooSoon.body).toEqual({ events: [], next: null });
    expect(settled.body.events.map((e: { id: string }) => e.id)).toEqual([change.eventId]);
  });

  it('loses no entry whose write landed late, behind a cursor a reader already passed', async () => {
    // Prepare: publisher A dates its entry at T and is slow; B dates its entry at T+1s and lands at once.
    const T = period();
    const slow = changeOf(DEALER, T);
    const fast = changeOf(DEALER, T);
    await published([fast], plus(T, 1000));
    // A reader takes B and moves its cursor past it before A's write lands.
    const first = await pageAt(DEALER, plus(T, 1000 + FEED_SETTLE_MS), { limit: '1' });
    const cursor = cursorOf(DEALER, feedKeyOf(plus(T, 1000), fast.eventId));
    // Act: A's write lands now; A's clock tells it the write took 7 s.
    const clock = [T.getTime(), T.getTime() + 7000, T.getTime() + 7000, T.getTime() + 7000];
    await putFeedEntries([slow], () => clock.shift() ?? T.getTime() + 7000);
    // Assess: the reader finds A after its cursor.
    const next = await pageAt(DEALER, plus(T, 7000 + FEED_SETTLE_MS), { after: cursor });
    expect(first.body.events.map((e: { id: string }) => e.id)).toEqual([fast.eventId]);
    expect(next.body.events.map((e: { id: string }) => e.id)).toEqual([slow.eventId]);
  });

  it('keeps one entry per event: a re-publish rewrites it (same id, one entry)', async () => {
    // Prepare
    const start = period();
    const change = changeOf(DEALER, start);
    // Act: published, then published again 3 s later (the reconciler after a crash).
    await published([change], start);
    await published([change], plus(start, 3000));
    // Assess
    const page = await pageAt(DEALER, plus(start, 3000 + FEED_SETTLE_MS));
    expect(page.body.events.map((e: { id: string }) => e.id)).toEqual([change.eventId]);
  });
});

describe('sequence numbers through the real publishing path', () => {
  it('puts an event in the feed before the bus: with the bus down it is listed, stays in the outbox, and a re-publish keeps one entry', async () => {
    // Prepare: a case failed by the worker's write, its event in the outbox; the bus is down.
    const record = acceptedCase({ attempts: 0 });
    await seedStatusRecords([record]);
    const at = new Date();
    const claim = await claimRecord(record.id, { now: at, leaseUntil: plus(at, 90_000).toISOString() });
    if (!claim.claimed) throw new Error('not claimed');
    const written = await recordAttempt(
      claim.claimed,
      { status: 'failed', attempts: 1, at, error: 'gone' },
      plus(at, 90_000).toISOString(),
    );
    if (!written) throw new Error('not written');
    bus.setMode('down');
    // Act
    const refused = await publishRecordEvents(written).then(
      () => 'published',
      () => 'refused',
    );
    const whileDown = await pageAt(WEB_FORMS, new Date(Date.now() + FEED_SETTLE_MS));
    const outbox = (await getStatusRecord(record.id))?.pendingEvents;
    bus.setMode('up');
    await publishRecordEvents(written);
    const afterRepublish = await pageAt(WEB_FORMS, new Date(Date.now() + FEED_SETTLE_MS));
    // Assess
    const ids = (page: { body: { events: { id: string; data: { recordId: string } }[] } }) =>
      page.body.events.filter((e) => e.data.recordId === record.id).map((e) => e.id);
    expect(refused).toBe('refused');
    expect(ids(whileDown)).toEqual([`${record.id}:${at.toISOString()}`]);
    expect(outbox).toHaveLength(1);
    expect(ids(afterRepublish)).toEqual([`${record.id}:${at.toISOString()}`]);
    expect((await getStatusRecord(record.id))?.pendingEvents).toBeUndefined();
  });

  it('a record failed, redriven and delivered lists 1 failed, 2 accepted, 3 delivered', async () => {
    // Prepare: a case of the web forms' client, failed by the worker's write.
    const record = acceptedCase({ attempts: 0 });
    await seedStatusRecords([record]);
    const settle = async (status: 'failed' | 'delivered', at: Date) => {
      const claim = await claimRecord(record.id, { now: at, leaseUntil: plus(at, 90_000).toISOString() });
      if (!claim.claimed) throw new Error('not claimed');
      const written = await recordAttempt(
        claim.claimed,
        {
          status,
          attempts: 1,
          at,
          ...(status === 'delivered' ? { downstreamId: '500Ab' } : { error: 'gone' }),
        },
        plus(at, 90_000).toISOString(),
      );
      if (!written) throw new Error('not written');
      await publishRecordEvents(written);
    };
    const t0 = new Date();
    // Act: failed, redriven (the operators' redrive), delivered; each published as the worker and redrive do.
    await settle('failed', t0);
    const failed = (await getStatusRecord(record.id)) as StatusRecord;
    const reopened = await reopenFailedRecord(failed, {
      at: plus(t0, 1),
      dueAt: plus(t0, 60_000).toISOString(),
    });
    if (!reopened) throw new Error('not reopened');
    await publishRecordEvents(reopened);
    await settle('delivered', plus(t0, 2));
    // Assess
    const page = await pageAt(WEB_FORMS, new Date(Date.now() + FEED_SETTLE_MS));
    const mine = page.body.events.filter(
      (e: { data: { recordId: string } }) => e.data.recordId === record.id,
    );
    expect(mine.map((e: { type: string; data: { sequence: number } }) => [e.data.sequence, e.type])).toEqual([
      [1, 'record.failed'],
      [2, 'record.accepted'],
      [3, 'record.delivered'],
    ]);
    expect(bus.details().filter((d) => d.recordId === record.id)).toHaveLength(3);
  });
});
