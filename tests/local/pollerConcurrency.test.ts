/**
 * The local poller runs batches at once as Lambda's event source does (up to its maximumConcurrency), against
 * fauxqs: the cap is kept and used, a quiet client's batch starts while a flood's batch is still in flight, and a
 * held downstream still gets one batch per probe period, alone in flight.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import type { HoldState } from '../../lib/outage/types.ts';
import { holdGate } from '../../local/holdGate.ts';
import { type PollClock, startPoller } from '../../local/queuePoller.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { lateSqs } from '../../testkit/lateSqs.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let queueUrl: string;

beforeEach(async () => {
  aws = await isolatedAws();
  queueUrl = aws.resources.queues.CaseQueue.url;
});

/**
 * Sends `count` messages `<prefix>-<n>` of client `owner`, as the producers write them: the client in the body and,
 * unless `grouped` is false, as the MessageGroupId.
 */
const send = async (prefix: string, count: number, owner = 'client-a', grouped = true) => {
  for (let start = 0; start < count; start += 10) {
    const entries = Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
      Id: String(i),
      MessageBody: JSON.stringify({
        id: `${prefix}-${start + i}`,
        kind: 'caseRecord',
        requestId: 'r',
        owner,
      }),
      ...(grouped ? { MessageGroupId: owner } : {}),
    }));
    await aws.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
  }
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (done: () => boolean) => {
  while (!done()) await pause(10);
};
const idsOf = (event: SQSEvent) => event.Records.map((r) => JSON.parse(r.body).id as string);

describe('batches at once, up to the cap', () => {
  const CAP = 3;
  const BACKLOG = 100;
  /** How long the slow worker takes a batch (only slowness: nothing below is timed). */
  const SLOW_MS = 1000;

  it.each([
    { grouped: true, mode: 'messages naming their client' },
    { grouped: false, mode: 'messages naming none' },
  ])(
    'runs as many batches at once as maximumConcurrency, and no more ($mode)',
    async ({ grouped }) => {
      // Prepare: a backlog of ten batches, and a worker that takes a while over each.
      await send('backlog', BACKLOG, 'client-a', grouped);
      let inFlight = 0;
      let most = 0;
      const handled: string[] = [];
      const handler = async (event: SQSEvent) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await pause(SLOW_MS);
        inFlight--;
        handled.push(...idsOf(event));
        return { batchItemFailures: [] };
      };
      // Act
      const poller = startPoller({
        sqs: aws.sqs,
        queueUrl,
        handler,
        batchSize: 10,
        batchingWindowSeconds: 1,
        waitSeconds: 0,
        maximumConcurrency: CAP,
      });
      await until(() => handled.length >= BACKLOG);
      await poller.stop();
      // Assess: never above the cap, and the cap used; every message handed out once.
      expect(most).toBeLessThanOrEqual(CAP);
      expect(most).toBe(CAP);
      expect(handled.length).toBe(BACKLOG);
      expect(new Set(handled).size).toBe(BACKLOG);
      expect(await aws.drain(queueUrl)).toEqual([]);
    },
    60_000,
  );
});

describe('a quiet client beside a flood', () => {
  const CONCURRENCY = 2;
  const BATCH = 100;
  const FLOOD = 600;

  /**
   * Client A's flood queued; a worker that holds each batch until the test lets it go. Once both slots hold a flood
   * batch, client B's one message arrives; then flood batches are let go one at a time until B's batch has started.
   * Answers the batches in the order they started (with how many were in flight beside each) and all handled.
   */
  const floodThenQuiet = async (grouped: boolean) => {
    await send('flood', FLOOD, 'client-a', grouped);
    const started: { ids: string[]; besides: number }[] = [];
    const releases: (() => void)[] = [];
    let releaseAll = false;
    let running = 0;
    const handled: string[] = [];
    const handler = async (event: SQSEvent) => {
      const ids = idsOf(event);
      started.push({ ids, besides: running });
      running++;
      if (!releaseAll) await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      handled.push(...ids);
      return { batchItemFailures: [] };
    };
    const poller = startPoller({
      sqs: aws.sqs,
      queueUrl,
      handler,
      batchSize: BATCH,
      batchingWindowSeconds: 1,
      waitSeconds: 0,
      maximumConcurrency: CONCURRENCY,
    });
    await until(() => started.length === CONCURRENCY);
    await send('quiet', 1, 'client-b', grouped);
    const quietBatch = () => started.findIndex((batch) => batch.ids.includes('quiet-0'));
    let released = 0;
    while (quietBatch() < 0) {
      await until(() => releases.length > released);
      const count = started.length;
      releases[released++]();
      await until(() => started.length > count || handled.length === FLOOD + 1);
    }
    releaseAll = true;
    for (const release of releases.slice(released)) release();
    await until(() => handled.length === FLOOD + 1);
    await poller.stop();
    return { started, handled, quietBatch: quietBatch() };
  };

  it("starts the quiet client's record first in the next batch, while a flood batch is still in flight", async () => {
    // Act
    const { started, handled, quietBatch } = await floodThenQuiet(true);
    // Assess: B's record heads the batch after the first two, which started beside a flood batch not yet ended;
    // nothing lost or doubled.
    expect(quietBatch).toBe(CONCURRENCY);
    expect(started[quietBatch].ids[0]).toBe('quiet-0');
    expect(started[quietBatch].besides).toBeGreaterThanOrEqual(1);
    expect(new Set(handled).size).toBe(FLOOD + 1);
    expect(await aws.drain(queueUrl)).toEqual([]);
  }, 60_000);

  it('without group ids (the control), waits behind the whole flood', async () => {
    const { started, handled, quietBatch } = await floodThenQuiet(false);
    expect(quietBatch).toBe(started.length - 1);
    expect(started[quietBatch].ids.at(-1)).toBe('quiet-0');
    expect(new Set(handled).size).toBe(FLOOD + 1);
  }, 60_000);
});

describe.each([
  { answers: 'at once', lateMs: 0 },
  { answers: '300 ms late, as on a loaded machine', lateMs: 300 },
])('a held downstream with two slots (SQS answering $answers)', ({ lateMs }) => {
  it('gets one batch per probe period, alone in flight however long the probe takes', async () => {
    // Prepare: the CRM held, its probe due; one message waiting. The first batch (the probe) is still in flight
    // more than two probe periods later on the poller's clock, which stops 70 s after the first batch until the test
    // has looked (counted from the first batch: the clock may pass 70 s before the first receive has answered).
    // The test moves the clock there itself too.
    const start = Date.parse('2026-11-27T04:00:00Z');
    const crm: HoldState = {
      held: true,
      heldSince: '2026-11-27T03:00:00.000Z',
      nextProbeAt: '2026-11-27T03:59:00.000Z',
    };
    await send('first', 1);
    let look: () => void = () => undefined;
    const looked = new Promise<void>((resolve) => {
      look = resolve;
    });
    let now = start;
    const clock: PollClock = {
      now: () => now,
      sleep: async (ms) => {
        now += ms;
        if (sinceFirst(now) >= 70_000) await looked;
        await new Promise((resolve) => setImmediate(resolve));
      },
    };
    let releaseFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const invocations: { ids: string[]; at: number; besides: number }[] = [];
    const sinceFirst = (at: number) => at - (invocations[0]?.at ?? Number.POSITIVE_INFINITY);
    let running = 0;
    const handler = async (event: SQSEvent) => {
      invocations.push({ ids: idsOf(event), at: clock.now(), besides: running });
      running++;
      if (invocations.length === 1) await firstHeld;
      running--;
      return { batchItemFailures: [] };
    };
    const gate = holdGate({
      downstream: 'crm',
      probeSeconds: 30,
      states: async () => ({ erp: { held: false }, crm }),
      clock,
    });
    // Act
    const poller = startPoller({
      sqs: lateSqs(aws.sqs, lateMs),
      queueUrl,
      handler,
      batchSize: 10,
      waitSeconds: 0,
      maximumConcurrency: 2,
      gate,
      clock,
    });
    await until(() => invocations.length === 1);
    await send('second', 1);
    // More than two probe periods pass on the poller's clock while the probe is in flight (the poller itself may
    // not sleep meanwhile: with its slots closed it waits for the probe to end); then it has real time to act.
    now = Math.max(now, invocations[0].at + 70_000);
    const deadline = Date.now() + 2000 + 4 * lateMs;
    await until(() => invocations.length > 1 || Date.now() > deadline);
    const whileProbeInFlight = invocations.length;
    look();
    releaseFirst();
    await until(() => invocations.length === 2);
    await poller.stop();
    // Assess
    expect(whileProbeInFlight).toBe(1);
    expect(invocations.map((i) => i.ids)).toEqual([['first-0'], ['second-0']]);
    expect(invocations[1].besides).toBe(0);
    expect(invocations[1].at - invocations[0].at).toBeGreaterThanOrEqual(30_000);
  }, 60_000);

  it('sends the probe of a hold that began with a batch in flight only once that batch has ended', async () => {
    // Prepare: the CRM not held; the first batch is in flight when the hold begins and the next message arrives.
    let crm: HoldState = { held: false };
    let askedWhileHeld = false;
    const gate = holdGate({
      downstream: 'crm',
      probeSeconds: 30,
      states: async () => {
        if (crm.held) askedWhileHeld = true;
        return { erp: { held: false }, crm };
      },
    });
    let releaseFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const invocations: { ids: string[]; besides: number }[] = [];
    let running = 0;
    const handler = async (event: SQSEvent) => {
      invocations.push({ ids: idsOf(event), besides: running });
      running++;
      if (invocations.length === 1) await firstHeld;
      running--;
      return { batchItemFailures: [] };
    };
    await send('first', 1);
    const poller = startPoller({
      sqs: lateSqs(aws.sqs, lateMs),
      queueUrl,
      handler,
      batchSize: 10,
      waitSeconds: 0,
      maximumConcurrency: 2,
      gate,
    });
    await until(() => invocations.length === 1);
    // Act: the hold begins, its probe due; a message arrives and the poller asks the gate for it.
    crm = { held: true, heldSince: '2026-11-27T03:00:00.000Z', nextProbeAt: '2026-11-27T03:59:00.000Z' };
    await send('second', 1);
    await until(() => askedWhileHeld);
    releaseFirst();
    await until(() => invocations.length === 2);
    await poller.stop();
    // Assess: the probe started alone, after the batch in flight had ended.
    expect(invocations.map((i) => i.ids)).toEqual([['first-0'], ['second-0']]);
    expect(invocations[1].besides).toBe(0);
  }, 60_000);
});
