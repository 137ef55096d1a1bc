/**
 * The console's read-only lists (records, failed, downstreams, webhooks, activity) through the console API's Lambda
 * handler (functions/consoleApi.ts), signed in with the REAL local OpenID Connect provider, against records the real
 * intake handlers accepted and the real worker code delivered, rejected or failed on dynalite and fauxqs, with the
 * SAP and Salesforce sandboxes (live records) and the simulators (test records: `Fail`, `Reject`).
 */
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/consoleApi.ts';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { storeActivity } from '../../lib/console/activity/storeActivity.ts';
import { cursorOf, type ListPosition, positionOf } from '../../lib/console/listCursor.ts';
import { listingPartitions, listRecords } from '../../lib/console/recordListing.ts';
import type { ConsoleRow } from '../../lib/console/rows.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { tableWebhookSwitch } from '../../lib/webhooks/disabledWebhooks.ts';
import { tableWebhookSummaries } from '../../lib/webhooks/webhookSummary.ts';
import { type LocalOidcProvider, startLocalOidcProvider } from '../../local/oidcProvider.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { devUserToken } from '../../testkit/consoleSignIn.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { apiEvent, jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import {
  caseInput,
  personalFields,
  personalValues,
  salesRegistrationInput,
  uniqueFrame,
} from '../../testkit/factories/records.ts';
import { DELIVERY, deliverAt, forgetHolds, OUTAGE, receive, secondsAfter } from '../delivery/support.ts';

const apiUrl = 'http://localhost:39004';
const ROW_KEYS = [
  'acceptedAt',
  'attempts',
  'client',
  'frameNumber',
  'id',
  'kind',
  'state',
  'test',
  'updatedAt',
];

let stack: DeliveryStack;
let oidc: LocalOidcProvider;
let token = '';
const T0 = new Date();

/** What the seeding left, by name. */
const seeded = {
  liveSales: [] as string[],
  liveFrames: [] as string[],
  cases: [] as string[],
  /** The frame number each of `cases` was posted with, as a form posts it (lower case). */
  caseFrames: [] as string[],
  openCase: '',
  openTest: '',
  testDelivered: '',
  testFailed: '',
  testRejected: '',
  bulk: [] as string[],
};

const idOf = (record: SQSRecord): string => JSON.parse(record.body).id;

/** Sales accepted in one request by a client; their ids. */
const acceptSales = async (key: string, records: Record<string, unknown>[]): Promise<string[]> => {
  const response = await salesHandler(
    jsonPost('/erp/sales_registration', records, { 'x-api-key': key }),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  return JSON.parse(response.body).registrations.map((r: { id: string }) => r.id);
};

const acceptCase = async (frameNo = uniqueFrame()): Promise<string> => {
  const response = await caseHandler(
    jsonPost('/crm/case', caseInput({ frameNo, surname: `Case${uniqueFrame()}` })),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(200);
  return JSON.parse(response.body).CrmId;
};

/** Delivers until settled (at most the tries and two), 10 minutes apart after T0, as the worker does. */
const untilSettled = async (records: SQSRecord[]) => {
  const holds = createDownstreamHolds(OUTAGE);
  for (let round = 1; round <= DELIVERY.maxAttempts + 2; round++) {
    const open = [];
    for (const record of records)
      if ((await getStatusRecord(idOf(record)))?.status === 'accepted') open.push(record);
    if (open.length === 0) return;
    await deliverAt(open, holds, secondsAfter(T0, round * 600), new OutcomeTally());
  }
};

/** The console API called as API Gateway calls it: `GET /console/api/<path>?<query>`. */
const get = async (path: string, query: Record<string, string> = {}) => {
  const answer = await handler(
    apiEvent({
      httpMethod: 'GET',
      path: `/console/api/${path}`,
      resource: '/console/api/{proxy+}',
      pathParameters: { proxy: path },
      queryStringParameters: Object.keys(query).length > 0 ? query : null,
      headers: { Authorization: `Bearer ${token}` },
    }),
    lambdaContext(),
  );
  return { status: answer.statusCode, json: JSON.parse(answer.body) };
};

/** Every page of a list, following `next`. */
const allPages = async (path: string, query: Record<string, string> = {}) => {
  const pages: ConsoleRow[][] = [];
  let cursor: string | undefined;
  do {
    const answer = await get(path, { ...query, ...(cursor ? { cursor } : {}) });
    expect(answer.status).toBe(200);
    pages.push(answer.json.records);
    cursor = answer.json.next;
  } while (cursor && pages.length < 20);
  return pages;
};

const isNewestFirst = (rows: ConsoleRow[]) =>
  rows.every((row, i) => i === 0 || rows[i - 1].acceptedAt >= row.acceptedAt);

beforeAll(async () => {
  [stack, oidc] = await Promise.all([startDeliveryStack(), startLocalOidcProvider({ apiUrl })]);
  Object.assign(process.env, { ...oidc.env, CONSOLE_ACTIVITY_SOURCE: 'store' });
  await forgetHolds(stack.aws.dynamoEndpoint);
  resetDownstreamClients();
  token = await devUserToken(oidc, apiUrl, 'support@example.com');

  // Live sales to SAP and cases to Salesforce, delivered; test sales answered by the simulators as their names say.
  seeded.liveFrames = [uniqueFrame('LIST'), uniqueFrame('LIST')];
  seeded.liveSales = await acceptSales(
    testKeys.dealer,
    seeded.liveFrames.map((FrameNum) => salesRegistrationInput({ FrameNum })),
  );
  [seeded.testDelivered, seeded.testFailed, seeded.testRejected] = await acceptSales(
    testKeys.testDealer,
    ['Sample', 'Fail', 'Reject'].map((Name) =>
      salesRegistrationInput({ FrameNum: uniqueFrame('TLIST'), Name }),
    ),
  );
  seeded.caseFrames = [uniqueFrame('CASE').toLowerCase(), uniqueFrame('CASE').toLowerCase()];
  seeded.cases = [await acceptCase(seeded.caseFrames[0]), await acceptCase(seeded.caseFrames[1])];
  const sales = await receive(stack.aws.sqs, stack.salesQueue, 5);
  const cases = await receive(stack.aws.sqs, stack.caseQueue, 2);
  await untilSettled([...sales.records, ...cases.records]);
  // One case left accepted (its message left on the queue), a test sale too, then 60 sales, never delivered.
  seeded.openCase = await acceptCase();
  [seeded.openTest] = await acceptSales(testKeys.testDealer, [
    salesRegistrationInput({ FrameNum: uniqueFrame('OPEN') }),
  ]);
  seeded.bulk = await acceptSales(
    testKeys.dealer,
    Array.from({ length: 60 }, () => salesRegistrationInput({ FrameNum: uniqueFrame('BULK') })),
  );
}, 120_000);
afterAll(async () => {
  await Promise.all([stack?.stop(), oidc?.stop()]);
});

describe('GET records', () => {
  it('lists every record newest first, in pages whose rows hold no personal data', async () => {
    // Act
    const pages = await allPages('records');
    // Assess
    const rows = pages.flat();
    const ids = rows.map((row) => row.id);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.slice(0, -1).every((page) => page.length === 50)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([...seeded.liveSales, ...seeded.cases, seeded.openCase, ...seeded.bulk]),
    );
    expect(isNewestFirst(rows)).toBe(true);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(ROW_KEYS);
    const text = JSON.stringify(pages);
    for (const field of personalFields) expect(text).not.toContain(`"${field}"`);
    for (const value of personalValues) expect(text).not.toContain(value);
  });

  it('shows each record as the contract says: kind, client, frame number, state, attempts, test', async () => {
    // Act
    const { json } = await get('records', { client: 'example-dealer-test' });
    // Assess
    const byId = new Map((json.records as ConsoleRow[]).map((row) => [row.id, row]));
    expect(byId.get(seeded.testDelivered)).toMatchObject({
      kind: 'salesRegistration',
      client: 'example-dealer-test',
      state: 'delivered',
      test: true,
    });
    expect(byId.get(seeded.testFailed)).toMatchObject({ state: 'failed', attempts: DELIVERY.maxAttempts });
    expect(byId.get(seeded.testRejected)).toMatchObject({ state: 'rejected' });
    const live = (await get('records', { q: seeded.liveFrames[0] })).json.records[0];
    expect(live).toMatchObject({
      id: seeded.liveSales[0],
      frameNumber: seeded.liveFrames[0],
      client: 'example-dealer',
      test: false,
    });
    const aCase = (await get('records', { q: seeded.cases[0] })).json.records[0];
    expect(aCase).toMatchObject({
      kind: 'crmCase',
      client: 'example-web-forms',
      frameNumber: seeded.caseFrames[0].toUpperCase(),
    });
  });

  it.each([
    ['kind', { kind: 'crmCase' }, (row: ConsoleRow) => row.kind === 'crmCase'],
    ['state', { state: 'delivered' }, (row: ConsoleRow) => row.state === 'delivered'],
    ['client', { client: 'example-web-forms' }, (row: ConsoleRow) => row.client === 'example-web-forms'],
    ['mode test', { mode: 'test' }, (row: ConsoleRow) => row.test],
    ['mode live', { mode: 'live' }, (row: ConsoleRow) => !row.test],
    [
      'kind and state',
      { kind: 'salesRegistration', state: 'failed' },
      (row: ConsoleRow) => row.state === 'failed',
    ],
  ] as const)('filters by %s, newest first', async (_name, query, holds) => {
    // Act
    const rows = (await allPages('records', query)).flat();
    // Assess
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every(holds)).toBe(true);
    expect(isNewestFirst(rows)).toBe(true);
  });

  it('filters by the accepted dates: from inclusive, to exclusive', async () => {
    // Prepare: the dealer's live sales, then its bulk sales (accepted later, in one request)
    const rows = (await allPages('records', { client: 'example-dealer' })).flat();
    const pivot = rows.find((row) => row.id === seeded.bulk[0]) as ConsoleRow;
    const before = rows.filter((row) => row.acceptedAt < pivot.acceptedAt);
    const atOrAfter = rows.filter((row) => row.acceptedAt >= pivot.acceptedAt);
    // Act
    const from = (await allPages('records', { client: 'example-dealer', from: pivot.acceptedAt })).flat();
    const to = (await allPages('records', { client: 'example-dealer', to: pivot.acceptedAt })).flat();
    const earliest = before.map((row) => row.acceptedAt).sort()[0];
    const between = (
      await allPages('records', { client: 'example-dealer', from: earliest, to: pivot.acceptedAt })
    ).flat();
    // Assess
    expect(before.map((row) => row.id).sort()).toEqual([...seeded.liveSales].sort());
    expect(from.map((row) => row.id).sort()).toEqual(atOrAfter.map((row) => row.id).sort());
    expect(to.map((row) => row.id).sort()).toEqual(before.map((row) => row.id).sort());
    expect(between.map((row) => row.id).sort()).toEqual(before.map((row) => row.id).sort());
  });

  it('finds a record by frame number, record id, SAP document number and Salesforce id', async () => {
    // Prepare
    const sale = await getStatusRecord(seeded.liveSales[1]);
    const aCase = await getStatusRecord(seeded.cases[1]);
    expect(sale?.downstreamId).toBeTruthy();
    expect(aCase?.downstreamId).toBeTruthy();
    // Act
    const [byFrame, byId, bySap, bySalesforce, none] = await Promise.all([
      get('records', { q: seeded.liveFrames[1] }),
      get('records', { q: seeded.openCase }),
      get('records', { q: sale?.downstreamId as string }),
      get('records', { q: aCase?.downstreamId as string }),
      get('records', { q: 'NOSUCHFRAME0000000' }),
    ]);
    // Assess
    expect(byFrame.json.records.map((row: ConsoleRow) => row.id)).toEqual([seeded.liveSales[1]]);
    expect(byId.json.records.map((row: ConsoleRow) => row.id)).toEqual([seeded.openCase]);
    expect(bySap.json.records.map((row: ConsoleRow) => row.id)).toEqual([seeded.liveSales[1]]);
    expect(bySalesforce.json.records.map((row: ConsoleRow) => row.id)).toEqual([seeded.cases[1]]);
    expect(none.json).toEqual({ records: [] });
  });

  it('finds a case by the frame number it was posted with, however it is written; the filters apply', async () => {
    // Act
    const [asPosted, upper, salesOnly, otherClient, formsClient] = await Promise.all([
      get('records', { q: seeded.caseFrames[1] }),
      get('records', { q: seeded.caseFrames[1].toUpperCase() }),
      get('records', { q: seeded.caseFrames[1], kind: 'salesRegistration' }),
      get('records', { q: seeded.caseFrames[1], client: 'example-dealer' }),
      get('records', { q: seeded.caseFrames[1], client: 'example-web-forms', kind: 'crmCase' }),
    ]);
    // Assess
    const ids = (answer: { json: { records: ConsoleRow[] } }) => answer.json.records.map((row) => row.id);
    expect(ids(asPosted)).toEqual([seeded.cases[1]]);
    expect(asPosted.json.records[0]).toMatchObject({
      kind: 'crmCase',
      client: 'example-web-forms',
      frameNumber: seeded.caseFrames[1].toUpperCase(),
      state: 'delivered',
    });
    expect(ids(upper)).toEqual([seeded.cases[1]]);
    expect(ids(salesOnly)).toEqual([]);
    expect(ids(otherClient)).toEqual([]);
    expect(ids(formsClient)).toEqual([seeded.cases[1]]);
  });

  it('applies the filters to a search too', async () => {
    // Act
    const wrongKind = await get('records', { q: seeded.liveFrames[0], kind: 'crmCase' });
    const wrongState = await get('records', { q: seeded.openCase, state: 'delivered' });
    const right = await get('records', { q: seeded.openCase, state: 'accepted', mode: 'live' });
    // Assess
    expect(wrongKind.json.records).toEqual([]);
    expect(wrongState.json.records).toEqual([]);
    expect(right.json.records.map((row: ConsoleRow) => row.id)).toEqual([seeded.openCase]);
  });

  it('pages through a filter in order, each record once', async () => {
    // Act
    const pages = await allPages('records', { client: 'example-dealer', state: 'accepted' });
    // Assess
    const ids = pages.flat().map((row) => row.id);
    expect(pages.map((page) => page.length)).toEqual([50, 10]);
    expect(ids.sort()).toEqual([...seeded.bulk].sort());
  });

  it('pages a listing merged from every partition, a few rows a page, each record once and newest first', async () => {
    // Prepare: the whole list in one page.
    const whole = await listRecords({}, undefined, 500);
    // Act: 3 rows a page, each page's position through its cursor, as the route passes it on.
    const rows: ConsoleRow[] = [];
    let position: ListPosition | undefined;
    for (let page = 0; page < 100; page++) {
      const answer = await listRecords({}, position as Extract<ListPosition, { kind: 'listing' }>, 3);
      rows.push(...answer.rows);
      if (!answer.next) break;
      position = positionOf(cursorOf(answer.next, {}), {}, listingPartitions({}));
    }
    // Assess
    expect(whole.next).toBeUndefined();
    expect(rows.map((row) => row.id)).toHaveLength(whole.rows.length);
    expect(new Set(rows.map((row) => row.id))).toEqual(new Set(whole.rows.map((row) => row.id)));
    expect(isNewestFirst(rows)).toBe(true);
  });

  it.each([
    ['garbled', () => 'not-a-cursor!'],
    ['not JSON', () => Buffer.from('{"f":').toString('base64url')],
    [
      'of another filter (the same partitions, another client)',
      () =>
        cursorOf(
          { kind: 'listing', partitions: { 'salesRegistration#accepted': 0 } },
          { client: 'example-web-forms', state: 'accepted' },
        ),
    ],
    [
      'naming a partition outside its filters',
      () =>
        cursorOf(
          { kind: 'listing', partitions: { 'caseRecord#failed': 0 } },
          { client: 'example-dealer', state: 'accepted' },
        ),
    ],
    [
      'with a key that is no record id',
      () =>
        cursorOf(
          {
            kind: 'listing',
            partitions: { 'salesRegistration#accepted': ['2026-12-07T00:00:00.000Z', 'hold#erp'] },
          },
          { client: 'example-dealer', state: 'accepted' },
        ),
    ],
  ])('refuses a cursor %s with 400', async (_name, cursor) => {
    // Act
    const answer = await get('records', { client: 'example-dealer', state: 'accepted', cursor: cursor() });
    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.message).toMatch(/^cursor /);
  });

  it.each([
    [{ kind: 'sale' }, /^kind must be one of salesRegistration, crmCase/],
    [{ state: 'lost' }, /^state must be one of accepted, delivered, rejected, failed/],
    [{ mode: 'sandbox' }, /^mode must be one of live, test/],
    [{ client: 'nobody' }, /^client must be the name of a configured client/],
    [{ from: 'yesterday' }, /^from must be a date/],
    [{ from: '2026-12-02', to: '2026-12-01' }, /^from must be before to/],
    [{ q: 'two words' }, /^q must be/],
    [{ sort: 'oldest' }, /^sort is not a parameter of this list/],
  ])('refuses %j with 400 naming the field and its rule', async (query, message) => {
    // Act
    const answer = await get('records', query as Record<string, string>);
    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.message).toMatch(message);
  });
});

describe('GET failed', () => {
  it('lists the failed records only, newest first, and refuses another filter', async () => {
    // Act
    const rows = (await allPages('failed')).flat();
    const refused = await get('failed', { state: 'delivered' });
    // Assess
    expect(rows.map((row) => row.id)).toContain(seeded.testFailed);
    expect(rows.every((row) => row.state === 'failed')).toBe(true);
    expect(isNewestFirst(rows)).toBe(true);
    expect(refused.status).toBe(400);
  });
});

describe('GET downstreams', () => {
  it('shows SAP and Salesforce open, then SAP held since its hold opened, with the records waiting', async () => {
    // Prepare
    const open = await get('downstreams');
    const holds = createDownstreamHolds({ ...OUTAGE, cacheSeconds: 0 });
    const at = new Date();
    await holds.noteOutcomes(
      'erp',
      Array.from({ length: OUTAGE.afterFailures }, (_, i) => ({
        recordId: `r${i}`,
        kind: 'transient' as const,
      })),
      at,
    );
    // Act
    const held = await get('downstreams');
    await forgetHolds(stack.aws.dynamoEndpoint);
    // Assess
    expect(open.json.downstreams).toEqual([
      { downstream: 'erp', name: 'SAP', held: false, waiting: seeded.bulk.length },
      // The seeded cases' Collections call carried the sandbox's Sforce-Limit-Info, which the CRM's hold kept.
      {
        downstream: 'crm',
        name: 'Salesforce',
        held: false,
        waiting: 1,
        apiUsage: { used: expect.any(Number), allowed: 115_000, at: expect.any(String) },
      },
    ]);
    expect(held.json.downstreams[0]).toEqual({
      downstream: 'erp',
      name: 'SAP',
      held: true,
      heldSince: at.toISOString(),
      reason: 'outage',
      nextProbeAt: secondsAfter(at, OUTAGE.probeSeconds).toISOString(),
      waiting: seeded.bulk.length,
    });
  });

  it("shows Salesforce's API allowance as the CRM's hold last read it: used, allowed, when", async () => {
    // Prepare: a reading counted as the worker counts a Salesforce answer's Sforce-Limit-Info.
    await forgetHolds(stack.aws.dynamoEndpoint);
    const at = new Date();
    await createDownstreamHolds({ ...OUTAGE, cacheSeconds: 0 }).noteApiUsage(41_500, 115_000, at);
    // Act
    const answer = await get('downstreams');
    await forgetHolds(stack.aws.dynamoEndpoint);
    // Assess
    expect(answer.json.downstreams[1]).toEqual({
      downstream: 'crm',
      name: 'Salesforce',
      held: false,
      waiting: 1,
      apiUsage: { used: 41_500, allowed: 115_000, at: at.toISOString() },
    });
    expect(answer.json.downstreams[0]).not.toHaveProperty('apiUsage');
  });
});

describe('GET webhooks', () => {
  it("shows each webhook client's host only, a disabled one, and the dispatcher's tries of the last 24 hours", async () => {
    // Prepare: the test client's webhook disabled by a 410; tries noted as the dispatcher notes them.
    await tableWebhookSwitch().disable('example-dealer-test', { at: new Date().toISOString(), status: 410 });
    const summaries = tableWebhookSummaries();
    const now = new Date();
    await summaries.noteTry('example-dealer', false, new Date(now.getTime() - 25 * 3_600_000));
    await summaries.noteTry('example-dealer', true, new Date(now.getTime() - 60_000));
    await summaries.noteTry('example-dealer', false, new Date(now.getTime() - 30_000));
    await summaries.noteTry('example-dealer', false, now);
    // Act
    const answer = await get('webhooks');
    // Assess
    expect(answer.json.webhooks).toEqual([
      {
        client: 'example-dealer',
        host: 'dealer-1234.example.com',
        enabled: true,
        lastSuccessAt: new Date(now.getTime() - 60_000).toISOString(),
        lastFailureAt: now.toISOString(),
        failuresLast24h: 2,
      },
      { client: 'example-dealer-test', host: 'dealer-1234.example.com', enabled: false, failuresLast24h: 0 },
    ]);
    expect(JSON.stringify(answer.json)).not.toContain('/dealer-gateway/');
  });
});

describe('GET activity', () => {
  it('counts the records accepted, delivered and failed per hour and downstream from the store, and the open ones', async () => {
    // Prepare: the hour of T0 and the one after (the deliveries happened 10 to 30 minutes after T0).
    const now = secondsAfter(T0, 40 * 60);
    // Act
    const hours = await storeActivity.hours(now);
    const answer = await get('activity');
    // Assess
    const total = (downstream: string, field: 'accepted' | 'delivered' | 'failed') =>
      hours.filter((hour) => hour.downstream === downstream).reduce((sum, hour) => sum + hour[field], 0);
    expect(hours).toHaveLength(48);
    expect(total('erp', 'accepted')).toBe(5 + 1 + seeded.bulk.length);
    expect(total('erp', 'delivered')).toBe(3);
    expect(total('erp', 'failed')).toBe(1);
    expect(total('crm', 'accepted')).toBe(3);
    expect(total('crm', 'delivered')).toBe(2);
    expect(answer.status).toBe(200);
    expect(answer.json.hours).toHaveLength(48);
    // The open case, the open test sale and the bulk sales.
    expect(answer.json.open.count).toBe(seeded.bulk.length + 2);
    const openCase = (await get('records', { q: seeded.openCase })).json.records[0] as ConsoleRow;
    expect(answer.json.open.oldestAcceptedAt).toBe(openCase.acceptedAt);
  });
});
