/**
 * The feed's promise (docs/API.md: page from the last `next` until `next` is null, and every entry is seen) under
 * slow, retried and reordered writes, with the publisher's real writes (lib/feed/feedEntries.ts) through a proxy in
 * front of dynalite and readers paging with their cursors through feedRequest (clock injected). First the
 * reviewer's experiment, with real time: a write held past the AWS client's 5 s attempt deadline lands after its
 * retry and the re-dated write. Then a property: publishers, writes that land late and readers, in every order
 * fast-check's scheduler picks, on a clock the test moves.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayProxyResult } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientNamed } from '../../lib/clients/clientsConfig.ts';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import { FEED_SETTLE_MS } from '../../lib/feed/constants.ts';
import { putFeedEntries } from '../../lib/feed/feedEntries.ts';
import { feedRequest } from '../../lib/feed/feedRequest.ts';
import type { CallerContext } from '../../lib/http/callerIdentity.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { apiEvent, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { readBody } from '../../testkit/readBody.ts';

const DEALER = 'example-dealer';
const DAY = 24 * 60 * 60 * 1000;
/** The service's DynamoDB client gives an attempt this long (lib/aws/clients.ts), then tries again. */
const ATTEMPT_DEADLINE_MS = 5_000;

/**
 * Sits in front of dynalite for the whole file: the reviewer's experiment holds one write through a hook, the
 * property through `gate` (each feed write awaits it before it goes on).
 */
let hooked: Awaited<ReturnType<typeof startHookedProxy>>;
type Gate = (forward: () => Promise<void>) => Promise<void>;
let gate: Gate | undefined;
let gated: Awaited<ReturnType<typeof startGatedProxy>>;

/** A proxy whose feed writes (UpdateItem of a `feed#` item) each pass `gate`, which may also send a late copy. */
const startGatedProxy = async (target: () => string) => {
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([key]) => !['host', 'content-length', 'connection'].includes(key)),
    ) as Record<string, string>;
    const forward = async () => {
      const answer = await fetch(`${target()}${req.url}`, { method: req.method, headers, body });
      return { status: answer.status, text: await answer.text(), type: answer.headers.get('content-type') };
    };
    const feedWrite =
      String(req.headers['x-amz-target']).endsWith('.UpdateItem') &&
      /"pk":\{"S":"feed#/.test(body.toString());
    try {
      if (feedWrite && gate) await gate(async () => void (await forward()));
      const answer = await forward();
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/x-amz-json-1.0' });
      res.end(answer.text);
    } catch {
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

beforeAll(async () => {
  const aws = await isolatedAws();
  hooked = await startHookedProxy(aws.dynamoEndpoint);
  // The chain: the service → the gated proxy → the hooked proxy → dynalite.
  gated = await startGatedProxy(() => hooked.endpoint);
  process.env.AWS_ENDPOINT_URL_DYNAMODB = gated.endpoint;
});

afterAll(async () => {
  await gated.stop();
  await hooked.stop();
});

/** A period of its own for each test and run: far enough apart that one's 30-day window never holds another's. */
let periods = 0;
const period = () => Date.UTC(2041, 0, 1) + periods++ * 60 * DAY;

/** A change of a fresh record of the dealer, at `at`. */
const changeOf = (at: number): RecordStateChanged =>
  stateChangeOf(acceptedCase({ owner: DEALER }), {
    state: 'delivered',
    attempts: 1,
    at: new Date(at),
    downstreamId: '500Ab',
  });

const callerContext = (): CallerContext => {
  const known = clientNamed(DEALER);
  if (!known) throw new Error(`no client ${DEALER}`);
  return { ...lambdaContext(), caller: { kind: 'client', client: known } };
};

/** One page of the dealer's feed as GET /events answers it at `now`. */
const pageAt = async (now: number, limit: number, after?: string) => {
  const query: Record<string, string> = { limit: String(limit), ...(after ? { after } : {}) };
  const answer: APIGatewayProxyResult = await feedRequest(
    apiEvent({
      path: '/events',
      resource: '/events',
      httpMethod: 'GET',
      headers: { 'x-api-key': testKeys.dealer },
      queryStringParameters: query,
      multiValueQueryStringParameters: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    }),
    callerContext(),
    () => new Date(now),
  );
  expect(answer.statusCode).toBe(200);
  const body = JSON.parse(answer.body) as { events: { id: string }[]; next: string | null };
  return { ids: body.events.map((e) => e.id), next: body.next ?? undefined };
};

/**
 * A reader as docs/API.md tells it to read: from the last non-null `next` it kept (none: from the start), page
 * until `next` is null, and keep the last non-null `next` for the next time.
 */
class Reader {
  readonly seen = new Set<string>();
  private cursor: string | undefined;
  private readonly limit: number;
  private readonly skewMs: number;

  constructor(limit: number, skewMs = 0) {
    this.limit = limit;
    this.skewMs = skewMs;
  }

  async catchUp(now: number): Promise<void> {
    let after = this.cursor;
    do {
      const page = await pageAt(now + this.skewMs, this.limit, after);
      for (const id of page.ids) this.seen.add(id);
      if (page.next) this.cursor = page.next;
      after = page.next;
    } while (after);
  }
}

describe("the reviewer's experiment: a write held past the client's attempt deadline", () => {
  it('lands after its retry re-dated the entry and moves nothing back: a reader with its cursor still gets X', async () => {
    // Prepare: Y and Z in the feed, dated 100 and 200 ms after T; X's first write will be held 6.5 s on its way.
    const T = period();
    const [x, y, z] = [changeOf(T), changeOf(T), changeOf(T)];
    await putFeedEntries([y], () => T + 100);
    await putFeedEntries([z], () => T + 200);
    hooked.reset();
    let released = () => {};
    const heldLanding = new Promise<void>((resolve) => {
      released = resolve;
    });
    hooked.before('UpdateItem', async () => {
      await sleep(ATTEMPT_DEADLINE_MS + 1_500);
      released();
    });
    const started = Date.now();
    const clock = () => T + (Date.now() - started);
    const reader = new Reader(1);
    // Act: X's write (its first attempt held, the client's retry lands, the slow round re-dates X, about 5 s in).
    await putFeedEntries([x], clock);
    // The reader reads at T + 6 s: Y and Z are settled, X's new key is not; one page of one: Y, and a cursor.
    const first = await pageAt(T + 6_000, 1);
    reader.seen.add(first.ids[0]);
    // The held first attempt reaches the store, with X's first key.
    await heldLanding;
    await sleep(300);
    // The reader goes on from its cursor once everything has settled.
    const rest: string[] = [];
    for (let after = first.next; after; ) {
      const page = await pageAt(T + 60_000, 1, after);
      rest.push(...page.ids);
      after = page.next;
    }
    // Assess: the race happened (X's key written three times: first attempt, its retry, the re-dated round, the
    // first attempt last), and the reader saw Y, then Z and X.
    const xKeys = hooked.requests
      .filter((r) => r.operation === 'UpdateItem' && JSON.stringify(r.body).includes(`feed#${x.eventId}`))
      .map((r) => (r.body.ExpressionAttributeValues as Record<string, { S?: string }>)[':key'].S);
    expect(xKeys).toHaveLength(3);
    expect(xKeys[0]).toBe(xKeys[1]);
    expect(xKeys[2] && xKeys[0] && xKeys[2] > xKeys[0]).toBe(true);
    expect(first.ids).toEqual([y.eventId]);
    expect(rest).toEqual([z.eventId, x.eventId]);
  }, 20_000);
});

/** What one run of the property sets up: publishers, readers, late writes and how the clock moves. */
interface Scenario {
  /** Each publisher's clock skew (ms): hosts disagree by up to 1.5 s each way. */
  publishers: number[];
  /** Each reader: its page size, clock skew and how many times it catches up while the publishers run. */
  readers: { limit: number; skewMs: number; reads: number }[];
  /** Feed writes in the order they come: held past the client's attempt deadline (retried, landing late) or not. */
  held: boolean[];
  /** Steps of the clock, each taken when the scheduler picks it. */
  ticks: number[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  publishers: fc.array(fc.integer({ min: -1500, max: 1500 }), { minLength: 2, maxLength: 4 }),
  readers: fc.array(
    fc.record({
      limit: fc.integer({ min: 1, max: 2 }),
      skewMs: fc.integer({ min: -1500, max: 1500 }),
      reads: fc.integer({ min: 1, max: 4 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  held: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
  ticks: fc.array(fc.integer({ min: 0, max: 4_000 }), { maxLength: 8 }),
});

/**
 * Runs one scenario in the scheduler's order; the events no reader may miss, and each reader's. The scheduler
 * picks the next step only when nothing is under way (`busy`: an actor or a late copy waiting on the store), so
 * that each choice is among every step waiting, not just the first to ask.
 */
const play = async (s: fc.Scheduler, plan: Scenario) => {
  const T = period();
  let now = T;
  let busy = 0;
  let wake = () => {};
  /** One step under way more (1) or less (-1); the driver below wakes when none is. */
  const underWay = (step: 1 | -1) => {
    busy += step;
    if (busy === 0) wake();
  };
  /** Waits for the scheduler to pick `label`; the caller is not under way meanwhile. */
  const turn = async (label: string) => {
    const picked = s.schedule(Promise.resolve(), label);
    underWay(-1);
    await picked;
    underWay(1);
  };
  const held = [...plan.held];
  gate = async (forward) => {
    // The write reaches the store when the scheduler says.
    await turn('a feed write reaches the store');
    if (held.shift()) {
      // Held in the network: the client waits out its attempt deadline and sends it again (this copy goes on
      // now), and the held attempt lands whenever the scheduler says, maybe after later writes of the entry.
      now += ATTEMPT_DEADLINE_MS;
      void s.schedule(Promise.resolve(), 'the held attempt lands').then(async () => {
        underWay(1);
        await forward().finally(() => underWay(-1));
      });
    }
  };
  for (const tick of plan.ticks)
    void s.schedule(Promise.resolve(), `${tick} ms pass`).then(() => (now += tick));
  const events = plan.publishers.map(() => changeOf(T));
  busy += plan.publishers.length + plan.readers.length;
  const publishers = plan.publishers.map(async (skew, i) => {
    await turn(`publisher ${i} starts`);
    // A publisher that gives up leaves the event in the outbox: the reconciler publishes it again.
    try {
      for (;;) {
        const published = await putFeedEntries([events[i]], () => now + skew).then(
          () => true,
          () => false,
        );
        if (published) return;
      }
    } finally {
      underWay(-1);
    }
  });
  const readers = plan.readers.map((r) => new Reader(r.limit, r.skewMs));
  const reading = plan.readers.map(async (r, i) => {
    try {
      for (let read = 0; read < r.reads; read++) {
        await turn(`reader ${i} catches up`);
        await readers[i].catchUp(now);
      }
    } finally {
      underWay(-1);
    }
  });
  let done = false;
  const actors = Promise.all([...publishers, ...reading]).finally(() => {
    done = true;
    wake();
  });
  for (;;) {
    const changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    // What the last step set going runs on first (a continuation, the next call it makes).
    await new Promise((resolve) => setImmediate(resolve));
    if (busy > 0) await changed;
    else if (s.count() > 0) await s.waitOne();
    else if (done) break;
  }
  await actors;
  gate = undefined;
  // Once everything has landed and settled, each reader catches up one last time from the cursor it kept.
  for (const reader of readers) await reader.catchUp(now + 2 * FEED_SETTLE_MS + 10_000);
  return { expected: events.map((e) => e.eventId), readers };
};

/**
 * Fixed, so that a failure is seen again run after run (the driver above leaves no order to chance). With this
 * seed and these arbitraries, run 101 has a held attempt land after its entry's re-dated write and after a
 * limit-1 reader passed Y: the unconditional write of before fails there (a random seed fails about once in 300).
 */
const SEED = 2093045456;

describe('every reader sees every entry, whatever the order of writes, late copies and reads', () => {
  it('under slow, retried and reordered writes, a reader paging with its cursor misses no entry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), scenario, async (s, plan) => {
        const { expected, readers } = await play(s, plan);
        for (const reader of readers) expect([...reader.seen].sort(), `${s}`).toEqual([...expected].sort());
      }),
      { numRuns: 150, seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
