import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { acceptRecords } from '../../lib/intake/acceptRecords.ts';
import { contentId } from '../../lib/intake/recordIds.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { RECORD_ID_PATTERN } from '../../lib/records/recordId.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getRecordState, getStatusRecords } from '../../lib/store/statusRecords.ts';
import { claimRecord } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord, QueuedRecord } from '../../lib/types.ts';
import { CONTENT_ID_KEY } from '../../testkit/apiKeys.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const SALES = '/erp/sales_registration';
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let proxy: Awaited<ReturnType<typeof startFaultyProxy>>;
let salesQueue: string;
let caseQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
  // The service talks to SQS through a proxy that can inject failures; the tests read the queue directly.
  proxy = await startFaultyProxy(aws.sqsEndpoint, 'SendMessageBatch');
  process.env.AWS_ENDPOINT_URL_SQS = proxy.endpoint;
  salesQueue = aws.resources.queues.SalesRegistrationQueue.url;
  caseQueue = aws.resources.queues.CaseQueue.url;
});

afterAll(() => proxy.stop());

beforeEach(async () => {
  proxy.heal();
  await aws.drain(salesQueue);
  await aws.drain(caseQueue);
});

const sales = (count: number) =>
  Array.from({ length: count }, () => salesRegistrationInput({ FrameNum: uniqueFrame() }));
const post = (body: unknown, headers: Record<string, string> = {}) =>
  salesHandler(jsonPost(SALES, body, headers), lambdaContext());
const idsOf = (response: { body: string }): string[] =>
  JSON.parse(response.body).registrations.map((r: { id: string }) => r.id);
const sortedIds = (messages: QueuedRecord[]) => messages.map((m) => m.id).sort();

describe('queueing accepted records', () => {
  it('puts each record on its queue with id, kind, request id and the normalised record, and stores its status', async () => {
    // Prepare
    const records = sales(3);
    records[1].CommPriv = 'private';
    records[2].Postcode = 2040;
    const event = jsonPost(SALES, records);
    // Act
    const response = await salesHandler(event, lambdaContext());
    const messages = await aws.drain(salesQueue);
    // Assess
    expect(response.statusCode).toBe(200);
    const ids = idsOf(response);
    expect(sortedIds(messages)).toEqual([...ids].sort());
    const second = messages.find((m) => m.id === ids[1]) as QueuedRecord;
    expect(second.kind).toBe('salesRegistration');
    expect(second.requestId).toBe(event.requestContext.requestId);
    // A message names its record and its client (the tenant of fair queueing), and carries none of its content:
    // the worker reads that from the store.
    expect(Object.keys(second).sort()).toEqual(['id', 'kind', 'owner', 'requestId']);
    expect(second.owner).toBe('example-dealer');
    const statuses = await getStatusRecords(ids);
    expect(statuses.get(ids[1])?.record).toMatchObject({
      CommPriv: 'P',
      MoreInfo: 'N',
      AllowSharing: 'N',
      FrameNum: records[1].FrameNum,
    });
    expect(statuses.get(ids[2])?.record).toMatchObject({ Postcode: '2040' });
    expect([...statuses.values()].map((s) => [s.status, s.attempts])).toEqual([
      ['accepted', 0],
      ['accepted', 0],
      ['accepted', 0],
    ]);
  });

  it('queues nothing when one record of the request is invalid', async () => {
    const records = sales(3);
    records[2].email = 'broken';
    const response = await post(records);
    expect(response.statusCode).toBe(400);
    expect(await aws.drain(salesQueue)).toEqual([]);
  });

  it('gives a duplicate (same normalised content within 24 hours) the earlier id and queues nothing new', async () => {
    // Prepare
    const records = sales(2);
    const first = await post(records);
    await aws.drain(salesQueue);
    // Act: the same content, differently spelled
    const again = await post(records.map((r) => ({ ...r, Name: ` ${r.Name} `, MoreInfo: 'N' })));
    // Assess
    expect(again.statusCode).toBe(200);
    expect(idsOf(again)).toEqual(idsOf(first));
    expect(await aws.drain(salesQueue)).toEqual([]);
  });

  it('treats the same record twice in one request as one record', async () => {
    const [record] = sales(1);
    const response = await post([record, record]);
    const ids = idsOf(response);
    expect(ids[0]).toBe(ids[1]);
    expect(await aws.drain(salesQueue)).toHaveLength(1);
  });

  it('replays an Idempotency-Key with the same answer and refuses it with another body (422)', async () => {
    // Prepare
    const key = `key-${uniqueFrame()}`;
    const records = sales(2);
    const first = await post(records, { 'Idempotency-Key': key });
    await aws.drain(salesQueue);
    // Act
    const replay = await post(records, { 'Idempotency-Key': key });
    const conflict = await post(sales(1), { 'Idempotency-Key': key });
    // Assess
    expect(replay.statusCode).toBe(200);
    expect(replay.body).toBe(first.body);
    expect(await aws.drain(salesQueue)).toEqual([]);
    expect(conflict.statusCode).toBe(422);
    expect(JSON.parse(conflict.body)).toEqual({
      success: false,
      message: 'Idempotency-Key was already used with a different body',
    });
  });

  it('replays a case Idempotency-Key and refuses it with another body in the case shape', async () => {
    const key = `case-${uniqueFrame()}`;
    const body = caseInput({ frameNo: uniqueFrame() });
    const first = await caseHandler(jsonPost('/crm/case', body, { 'Idempotency-Key': key }), lambdaContext());
    const replay = await caseHandler(
      jsonPost('/crm/case', body, { 'Idempotency-Key': key }),
      lambdaContext(),
    );
    const conflict = await caseHandler(
      jsonPost('/crm/case', { ...body, comments: 'other' }, { 'Idempotency-Key': key }),
      lambdaContext(),
    );
    expect(replay.body).toBe(first.body);
    expect(await aws.drain(caseQueue)).toHaveLength(1);
    expect(conflict.statusCode).toBe(422);
    expect(JSON.parse(conflict.body)).toBe(
      'Create Case failed: Idempotency-Key was already used with a different body',
    );
  });

  it('queues text beyond the Basic Multilingual Plane (emoji) intact', async () => {
    const response = await caseHandler(
      jsonPost('/crm/case', caseInput({ frameNo: uniqueFrame(), comments: 'Great bike 🏍️👍' })),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
    const [message] = await aws.drain(caseQueue);
    const stored = (await getStatusRecords([message.id])).get(message.id)?.record as CaseRecord;
    expect(stored.comments).toBe('Great bike 🏍️👍');
  });

  it('re-sends entries SQS refuses, queueing each record once', async () => {
    proxy.refuseFirstEntryOnce();
    const response = await post(sales(3));
    expect(response.statusCode).toBe(200);
    expect(sortedIds(await aws.drain(salesQueue))).toEqual(idsOf(response).sort());
  });

  it('answers 503 when SQS fails mid-request; the retry gets 200 and queues the rest at once, each once', async () => {
    // Prepare: 25 records are three batches; the second and third fail.
    const records = sales(25);
    proxy.failAfter(1);
    // Act
    const failed = await post(records);
    const queuedBeforeRetry = await aws.drain(salesQueue);
    proxy.heal();
    const retried = await post(records);
    const queuedByRetry = await aws.drain(salesQueue);
    // A worker receives every record queued and is still on them in five minutes (its lease tells the reconciler
    // they are being worked on).
    const claimedAt = new Date();
    for (const message of [...queuedBeforeRetry, ...queuedByRetry])
      await claimRecord(message.id, {
        now: claimedAt,
        leaseUntil: new Date(claimedAt.getTime() + 400_000).toISOString(),
      });
    const inFiveMinutes = new Date(Date.now() + 5 * 60 * 1000 + 1000);
    await reconcileOpenRecords({ now: inFiveMinutes });
    const queuedByReconciler = await aws.drain(salesQueue);
    // Assess
    expect(failed.statusCode).toBe(503);
    expect(failed.headers?.['retry-after']).toBe('5');
    expect(failed.headers?.['content-type']).toMatch(/^text\/plain/);
    expect(failed.body).toMatch(
      /^An unexpected error has occurred\. Please contact the web services team with the query settings\. Reference: /,
    );
    expect(queuedBeforeRetry).toHaveLength(10);
    // Stored before the failure: the retry names the same records and queues at once the fifteen the first try
    // could not (it marked them unqueued), not the ten it had queued.
    expect(retried.statusCode).toBe(200);
    const ours = new Set(idsOf(retried));
    expect(sortedIds(queuedByRetry)).toEqual(
      [...ours].filter((id) => !queuedBeforeRetry.some((m) => m.id === id)).sort(),
    );
    const all = [...queuedBeforeRetry, ...queuedByRetry].map((m) => m.id);
    expect(all.sort()).toEqual([...ours].sort());
    // (Records of earlier tests in this file, drained without a worker, are due too: count only this request's.)
    expect(queuedByReconciler.filter((m) => ours.has(m.id))).toEqual([]);
  });

  it('answers a case with 503 in the unexpected-error object when SQS is down', async () => {
    proxy.failAfter(0);
    const response = await caseHandler(
      jsonPost('/crm/case', caseInput({ frameNo: uniqueFrame() })),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe('5');
    const body = JSON.parse(response.body);
    expect(body).toEqual({
      error: 'An unexpected error occurred',
      details: expect.stringContaining('Reference: '),
      stackTrace: '',
    });
  });
});

describe('records whose queueing may have been lost', () => {
  const caseRecord = (): CaseRecord => ({
    firstName: 'Lost',
    surname: 'Message',
    email: 'lost@example.com',
    frameNo: uniqueFrame(),
  });
  const at = (iso: string) => new Date(iso);

  it('leaves a record whose request died before queueing to the reconciler: a duplicate request does not queue it', async () => {
    // Prepare: a status record written by a request that died before SQS, due for the reconciler at 08:05.
    const record = caseRecord();
    const id = contentId(CONTENT_ID_KEY, 'caseRecord', record, 'example-web-forms');
    const acceptedAt = '2026-11-22T08:00:00.000Z';
    await seedStatusRecords([
      {
        id,
        kind: 'caseRecord',
        status: 'accepted',
        attempts: 0,
        acceptedAt,
        updatedAt: acceptedAt,
        requestId: 'r1',
        owner: 'example-web-forms',
        record,
        openKind: 'caseRecord',
        dueAt: '2026-11-22T08:05:00.000Z',
      },
    ]);
    const request = {
      kind: 'caseRecord' as const,
      records: [record],
      requestId: 'r2',
      owner: 'example-web-forms',
    };
    // Act
    const soon = await acceptRecords({ ...request, now: at('2026-11-22T08:01:00Z') });
    const queuedSoon = await aws.drain(caseQueue);
    const early = await reconcileOpenRecords({ now: at('2026-11-22T08:04:00Z'), kinds: ['caseRecord'] });
    const due = await reconcileOpenRecords({ now: at('2026-11-22T08:06:00Z'), kinds: ['caseRecord'] });
    const queuedLater = await aws.drain(caseQueue);
    // Assess
    expect(soon).toEqual([id]);
    expect(queuedSoon).toEqual([]);
    expect(early.requeued.caseRecord).toBe(0);
    expect(due).toMatchObject({ requeued: { caseRecord: 1 }, oldestWaitSeconds: 360 });
    expect(queuedLater.map((m) => [m.id, m.requestId])).toEqual([[id, 'r1']]);
  });

  it('queues again, on a repeat, only the records its request marked unqueued that nobody has moved since', async () => {
    // Prepare: four cases an earlier request stored at 08:00: three it could not queue (marked `unqueued`), of which
    // a worker has since claimed one and the reconciler queued another again; the fourth it queued.
    const records = [caseRecord(), caseRecord(), caseRecord(), caseRecord()];
    const [left, claimed, requeued, queued] = records.map((record) =>
      contentId(CONTENT_ID_KEY, 'caseRecord', record, 'example-web-forms'),
    );
    const stored = (id: string, record: CaseRecord, changes: Partial<StatusRecord>): StatusRecord => ({
      id,
      kind: 'caseRecord',
      status: 'accepted',
      attempts: 0,
      acceptedAt: '2026-11-22T08:00:00.000Z',
      updatedAt: '2026-11-22T08:00:00.000Z',
      requestId: 'r1',
      owner: 'example-web-forms',
      record,
      openKind: 'caseRecord',
      dueAt: '2026-11-22T08:05:00.000Z',
      ...changes,
    });
    await seedStatusRecords([
      stored(left, records[0], { unqueued: true }),
      stored(claimed, records[1], { unqueued: true, tries: 1, leaseUntil: '2026-11-22T08:01:30.000Z' }),
      stored(requeued, records[2], { unqueued: true, requeues: 1, requeuedAt: '2026-11-22T08:05:00.000Z' }),
      stored(queued, records[3], {}),
    ]);
    // Act: the client's retry of each content, at 08:06.
    const ids: string[] = [];
    for (const record of records)
      ids.push(
        ...(await acceptRecords({
          kind: 'caseRecord',
          records: [record],
          requestId: 'r2',
          owner: 'example-web-forms',
          now: at('2026-11-22T08:06:00Z'),
        })),
      );
    const sent = await aws.drain(caseQueue);
    // Assess: the same ids; one message, of the record left unqueued, naming the request that stored it.
    expect(ids).toEqual([left, claimed, requeued, queued]);
    expect(sent.map((m) => [m.id, m.requestId])).toEqual([[left, 'r1']]);
  });

  it('queues on a repeat what a request that died unmarked stored, once its time is over (a timeout, a 504)', async () => {
    // Prepare: two cases a request stored at 08:00:05 and never queued nor marked: its invocation ran out at
    // 08:00:10 (answerBy). Records stored before answerBy was written carry none (the test above).
    const records = [caseRecord(), caseRecord()];
    const ids = records.map((record) => contentId(CONTENT_ID_KEY, 'caseRecord', record, 'example-web-forms'));
    await seedStatusRecords(
      records.map((record, i) => ({
        id: ids[i],
        kind: 'caseRecord' as const,
        status: 'accepted' as const,
        attempts: 0,
        acceptedAt: '2026-11-22T08:00:05.000Z',
        updatedAt: '2026-11-22T08:00:05.000Z',
        requestId: 'r1',
        answerBy: '2026-11-22T08:00:10.000Z',
        owner: 'example-web-forms',
        record,
        openKind: 'caseRecord',
        dueAt: '2026-11-22T08:05:05.000Z',
      })),
    );
    const repeat = (record: CaseRecord, now: string) =>
      acceptRecords({
        kind: 'caseRecord',
        records: [record],
        requestId: 'r2',
        owner: 'example-web-forms',
        now: at(now),
      });
    // Act: a repeat of the first while the request may still be running (it could still send it), then of both
    // once its time is over.
    await repeat(records[0], '2026-11-22T08:00:09Z');
    const whileRunning = await aws.drain(caseQueue);
    await repeat(records[0], '2026-11-22T08:00:11Z');
    await repeat(records[1], '2026-11-22T08:00:11Z');
    const afterwards = await aws.drain(caseQueue);
    // Assess: nothing while it might still send them; both at once after, each naming the request that stored it.
    expect(whileRunning).toEqual([]);
    expect(afterwards.map((m) => [m.id, m.requestId]).sort()).toEqual(ids.map((id) => [id, 'r1']).sort());
  });

  it("through the handler: a record's answerBy is the invocation's remaining time on", async () => {
    // Prepare: an invocation with 4 s left
    const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 4_000 };
    const before = Date.now();
    // Act
    const answer = await caseHandler(jsonPost('/crm/case', caseInput({ frameNo: uniqueFrame() })), context);
    const after = Date.now();
    await aws.drain(caseQueue);
    // Assess
    const { CrmId } = JSON.parse(answer.body as string) as { CrmId: string };
    const answerBy = Date.parse((await getRecordState(CrmId))?.answerBy ?? '');
    expect(answerBy).toBeGreaterThanOrEqual(before + 4_000);
    expect(answerBy).toBeLessThanOrEqual(after + 4_000);
  });

  it('writes when its request ends at the latest on every record it stores', async () => {
    // Prepare
    const record = caseRecord();
    const answerBy = at('2026-11-22T08:00:10Z');
    // Act
    const [id] = await acceptRecords({
      kind: 'caseRecord',
      records: [record],
      requestId: 'r1',
      owner: 'example-web-forms',
      now: at('2026-11-22T08:00:01Z'),
      answerBy,
    });
    await aws.drain(caseQueue);
    // Assess
    expect((await getRecordState(id))?.answerBy).toBe(answerBy.toISOString());
  });

  it('accepts the same content again as a new record after 24 hours, keeping the first', async () => {
    const record = caseRecord();
    const request = {
      kind: 'caseRecord' as const,
      records: [record],
      requestId: 'r',
      owner: 'example-web-forms',
    };
    const [first] = await acceptRecords({ ...request, now: at('2026-11-20T08:00:00Z') });
    const [second] = await acceptRecords({ ...request, now: at('2026-11-21T09:00:00Z') });
    const [third] = await acceptRecords({ ...request, now: at('2026-11-21T09:03:00Z') });
    expect(second).not.toBe(first);
    // Every record id is 32 hex characters, the later ones too: SAP and Salesforce hold no more.
    expect(second).toMatch(new RegExp(RECORD_ID_PATTERN));
    expect(third).toBe(second);
    // The third, 3 minutes on, finds the second unmoved (no worker runs here) past its request's time: it may never
    // have been queued, so it is queued again (a second message, which the worker's claim makes harmless).
    expect(sortedIds(await aws.drain(caseQueue))).toEqual([first, second, second].sort());
    const stored = await getStatusRecords([first, second]);
    expect(stored.get(first)?.acceptedAt).toBe('2026-11-20T08:00:00.000Z');
    expect(stored.get(second)?.acceptedAt).toBe('2026-11-21T09:00:00.000Z');
  });
});
