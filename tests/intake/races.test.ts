/**
 * Requests that race or repeat: each record is created by one conditional write and queued once, whatever arrives
 * together; with an `Idempotency-Key`, the key (not the content) decides what is a repeat.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { sha256 } from '../../lib/intake/recordIds.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import { RECORD_ID_PATTERN } from '../../lib/records/recordId.ts';
import { claimIdempotencyKey, readIdempotencyEntry } from '../../lib/store/idempotencyEntries.ts';
import { claimRecord } from '../../lib/store/statusUpdates.ts';
import type { QueuedRecord } from '../../lib/types.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const SALES = '/erp/sales_registration';
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let proxy: Awaited<ReturnType<typeof startFaultyProxy>>;
let salesQueue: string;
let caseQueue: string;

beforeAll(async () => {
  aws = await isolatedAws();
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
const postSales = (body: unknown, headers: Record<string, string> = {}) =>
  salesHandler(jsonPost(SALES, body, headers), lambdaContext());
const postCase = (body: unknown, headers: Record<string, string> = {}) =>
  caseHandler(jsonPost('/crm/case', body, headers), lambdaContext());
const idsOf = (response: { body: string }): string[] =>
  JSON.parse(response.body).registrations.map((r: { id: string }) => r.id);
const countBy = (messages: QueuedRecord[]) => {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return counts;
};

describe('identical requests at the same moment', () => {
  it('8 identical 3-record sales requests: all 200 with the same ids, each record queued once', async () => {
    // Prepare
    const records = sales(3);
    // Act
    const answers = await Promise.all(Array.from({ length: 8 }, () => postSales(records)));
    const queued = await aws.drain(salesQueue);
    // Assess
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200));
    const ids = idsOf(answers[0]);
    for (const answer of answers) expect(idsOf(answer)).toEqual(ids);
    expect([...countBy(queued)].sort()).toEqual(ids.map((id) => [id, 1]).sort());
  });

  it('8 identical cases: one CrmId, queued once', async () => {
    const body = caseInput({ frameNo: uniqueFrame() });
    const answers = await Promise.all(Array.from({ length: 8 }, () => postCase(body)));
    const queued = await aws.drain(caseQueue);
    const crmIds = new Set(answers.map((a) => JSON.parse(a.body).CrmId));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200));
    expect(crmIds.size).toBe(1);
    expect(queued.map((m) => m.id)).toEqual([...crmIds]);
  });

  it('overlapping multi-record requests (records in common): each record queued once', async () => {
    const [a, b, c, d] = sales(4);
    const answers = await Promise.all([
      postSales([a, b, c]),
      postSales([b, c, d]),
      postSales([c, a]),
      postSales([d, b, a, c]),
    ]);
    const queued = await aws.drain(salesQueue);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    const all = new Set(answers.flatMap(idsOf));
    expect(all.size).toBe(4);
    expect([...countBy(queued).values()]).toEqual([1, 1, 1, 1]);
    expect(new Set(queued.map((m) => m.id))).toEqual(all);
  });
});

describe('Idempotency-Key', () => {
  it('with two different bodies at the same moment: exactly one is accepted, the other refused (409 or 422)', async () => {
    for (let round = 0; round < 5; round++) {
      // Prepare
      const key = `race-${uniqueFrame()}`;
      const [first, second] = [sales(2), sales(1)];
      // Act
      const answers = await Promise.all([
        postSales(first, { 'Idempotency-Key': key }),
        postSales(second, { 'Idempotency-Key': key }),
      ]);
      const queued = await aws.drain(salesQueue);
      // Assess
      const statuses = answers.map((a) => a.statusCode).sort();
      expect(statuses[0]).toBe(200);
      expect([409, 422]).toContain(statuses[1]);
      const winner = answers.find((a) => a.statusCode === 200) as { body: string };
      expect(queued.map((m) => m.id).sort()).toEqual(idsOf(winner).sort());
    }
  });

  it('with the same body at the same moment: queued once; the others get 200 or 409 (still in progress)', async () => {
    const key = `same-${uniqueFrame()}`;
    const records = sales(2);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => postSales(records, { 'Idempotency-Key': key })),
    );
    const queued = await aws.drain(salesQueue);
    const ok = answers.filter((a) => a.statusCode === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([200, 409]).toContain(a.statusCode);
    for (const a of ok) expect(idsOf(a)).toEqual(idsOf(ok[0]));
    expect([...countBy(queued)].sort()).toEqual(
      idsOf(ok[0])
        .map((id) => [id, 1])
        .sort(),
    );
    const conflicted = answers.find((a) => a.statusCode === 409);
    if (conflicted)
      expect(JSON.parse(conflicted.body)).toEqual({
        success: false,
        message: 'a request with this Idempotency-Key is still being processed; retry later',
      });
  });

  it('decides instead of the content: the same content under a new key is a new record', async () => {
    // Prepare
    const body = caseInput({ frameNo: uniqueFrame() });
    // Act
    const withoutKey = await postCase(body);
    const keyA = await postCase(body, { 'Idempotency-Key': `a-${uniqueFrame()}` });
    const keyB = await postCase(body, { 'Idempotency-Key': `b-${uniqueFrame()}` });
    const queued = await aws.drain(caseQueue);
    // Assess
    const ids = [withoutKey, keyA, keyB].map((a) => JSON.parse(a.body).CrmId as string);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(new RegExp(RECORD_ID_PATTERN));
    expect(queued.map((m) => m.id).sort()).toEqual([...ids].sort());
  });

  it('names the record accepted under a key when the same content comes again without one', async () => {
    // Prepare
    const body = caseInput({ frameNo: uniqueFrame() });
    const keyed = await postCase(body, { 'Idempotency-Key': `first-${uniqueFrame()}` });
    // Act
    const keyless = await postCase(body);
    const queued = await aws.drain(caseQueue);
    // Assess: one record, queued once, and its alias is no record of its own.
    expect(JSON.parse(keyless.body).CrmId).toBe(JSON.parse(keyed.body).CrmId);
    expect(queued.map((m) => m.id)).toEqual([JSON.parse(keyed.body).CrmId]);
  });

  it('answers 409 while the first request with the key runs, and lets a retry take over a key whose request died', async () => {
    // Prepare: entries as a running request (just started) and a dead one (started 31 s ago) leave them.
    const body = caseInput({ frameNo: uniqueFrame() });
    const running = `running-${uniqueFrame()}`;
    const dead = `dead-${uniqueFrame()}`;
    const now = new Date();
    const entry = (key: string, startedAt: Date, bodyHash: string) => ({
      kind: 'caseRecord' as const,
      keyHash: sha256(`example-web-forms\n${key}`),
      bodyHash,
      state: 'started' as const,
      startedAt: startedAt.toISOString(),
      expiresAt: Math.floor(now.getTime() / 1000) + 3600,
    });
    // A same-body repeat needs the entries to carry this body's hash: learn it from a real request with a key.
    const probeKey = `probe-${uniqueFrame()}`;
    await postCase(body, { 'Idempotency-Key': probeKey });
    await aws.drain(caseQueue);
    const probe = await readIdempotencyEntry('caseRecord', sha256(`example-web-forms\n${probeKey}`));
    expect(probe?.state).toBe('done');
    const bodyHash = probe?.bodyHash as string;
    const nowSeconds = Math.floor(now.getTime() / 1000);
    await claimIdempotencyKey(entry(running, now, bodyHash), nowSeconds);
    await claimIdempotencyKey(entry(dead, new Date(now.getTime() - 31_000), bodyHash), nowSeconds);
    // Act
    const whileRunning = await postCase(body, { 'Idempotency-Key': running });
    const afterDeath = await postCase(body, { 'Idempotency-Key': dead });
    const queued = await aws.drain(caseQueue);
    // Assess
    expect(whileRunning.statusCode).toBe(409);
    expect(JSON.parse(whileRunning.body)).toBe(
      'Create Case failed: a request with this Idempotency-Key is still being processed; retry later',
    );
    expect(afterDeath.statusCode).toBe(200);
    expect(queued.map((m) => m.id)).toEqual([JSON.parse(afterDeath.body).CrmId]);
  });

  it('after a 503, the retry with the same key and body is answered 200 and queues what the first left, each once', async () => {
    // Prepare: SQS down for the first try.
    const key = `retry-${uniqueFrame()}`;
    const records = sales(3);
    proxy.failAfter(0);
    // Act
    const failed = await postSales(records, { 'Idempotency-Key': key });
    proxy.heal();
    const retried = await postSales(records, { 'Idempotency-Key': key });
    const queuedByRetry = await aws.drain(salesQueue);
    // A worker receives them (its claim) and is still on them when the reconciler looks, five minutes on.
    const now = new Date();
    for (const message of queuedByRetry)
      await claimRecord(message.id, { now, leaseUntil: new Date(now.getTime() + 400_000).toISOString() });
    const reconciled = await reconcileOpenRecords({
      now: new Date(Date.now() + 301_000),
      kinds: ['salesRegistration'],
    });
    const queuedByReconciler = await aws.drain(salesQueue);
    // Assess: the retry queued the three stored by the first try at once (marked unqueued), each once; the
    // reconciler had nothing of them to do.
    expect(failed.statusCode).toBe(503);
    expect(retried.statusCode).toBe(200);
    const ids = new Set(idsOf(retried));
    expect([...countBy(queuedByRetry)].sort()).toEqual([...ids].map((id) => [id, 1]).sort());
    expect(queuedByReconciler.filter((m) => ids.has(m.id))).toEqual([]);
    expect(reconciled.unqueued).toBe(0);
  });
});
