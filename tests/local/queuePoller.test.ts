/**
 * The local poller as Lambda's SQS event source, against fauxqs with the clock given: it gathers a batch over
 * repeated receives until the batch size or the batching window (from the first message), invokes once, deletes
 * what succeeded; serverless.yml's event sources are what it reads; a held downstream's queue gives one batch per
 * probe period.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import type { Downstream, HoldState } from '../../lib/outage/types.ts';
import { eventSourcesOf } from '../../local/eventSources.ts';
import { cachedHoldStates, holdGate } from '../../local/holdGate.ts';
import { type PollClock, pollOnce, startPoller } from '../../local/queuePoller.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { lateSqs } from '../../testkit/lateSqs.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let queueUrl: string;

beforeEach(async () => {
  aws = await isolatedAws();
  queueUrl = aws.resources.queues.CaseQueue.url;
});

/** Sends `count` messages named `<prefix>-<n>`. */
const send = async (prefix: string, count: number) => {
  for (let start = 0; start < count; start += 10) {
    const entries = Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
      Id: String(i),
      MessageBody: JSON.stringify({ id: `${prefix}-${start + i}`, kind: 'caseRecord', requestId: 'r' }),
    }));
    await aws.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
  }
};

/** A clock that only moves when the poller waits; `onSleep` runs at each wait (messages arriving meanwhile). */
const movedClock = (onSleep: (now: number) => Promise<void> = async () => undefined) => {
  let now = Date.parse('2026-11-27T04:00:00Z');
  const clock: PollClock & { waited: number } = {
    waited: 0,
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      clock.waited += ms;
      await onSleep(now);
      // A real turn of the event loop, so a poller loop lets the test run.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return clock;
};

/** A handler that remembers each invocation's message ids, and the clock's time at it. */
const recordingHandler = (clock?: PollClock) => {
  const invocations: { ids: string[]; at?: number }[] = [];
  const handler = async (event: SQSEvent) => {
    invocations.push({ ids: event.Records.map((r) => JSON.parse(r.body).id), at: clock?.now() });
    return { batchItemFailures: [] };
  };
  return { invocations, handler };
};

describe('gathering a batch', () => {
  it('invokes once with every message that arrives within the window, up to the batch size', async () => {
    // Prepare: three waiting; two more arrive while the poller gathers (at its first wait).
    await send('early', 3);
    let arrived = false;
    const clock = movedClock(async () => {
      if (!arrived) await send('late', 2);
      arrived = true;
    });
    const { invocations, handler } = recordingHandler();
    // Act
    const result = await pollOnce({
      sqs: aws.sqs,
      queueUrl,
      handler,
      batchSize: 5,
      batchingWindowSeconds: 2,
      clock,
    });
    // Assess
    expect(invocations).toHaveLength(1);
    expect(invocations[0].ids.sort()).toEqual(['early-0', 'early-1', 'early-2', 'late-0', 'late-1']);
    expect(result).toEqual({ received: 5, deleted: 5, failed: 0 });
    expect(await aws.drain(queueUrl)).toEqual([]);
  });

  it('invokes a lone message once the window has passed, not later', async () => {
    // Prepare
    await send('lone', 1);
    const clock = movedClock();
    const { invocations, handler } = recordingHandler(clock);
    const firstReceive = clock.now();
    // Act
    await pollOnce({ sqs: aws.sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1, clock });
    // Assess: on the moved clock, the invocation came at most the window after the first message.
    expect(invocations.map((i) => i.ids)).toEqual([['lone-0']]);
    expect((invocations[0].at ?? Number.POSITIVE_INFINITY) - firstReceive).toBeLessThanOrEqual(1000);
    expect(clock.waited).toBeGreaterThan(0);
  });

  it('never puts more than the batch size in one invocation, and deletes a batch of more than ten', async () => {
    // Prepare
    await send('many', 25);
    const clock = movedClock();
    const { invocations, handler } = recordingHandler();
    // Act
    const first = await pollOnce({
      sqs: aws.sqs,
      queueUrl,
      handler,
      batchSize: 15,
      batchingWindowSeconds: 60,
      clock,
    });
    const second = await pollOnce({
      sqs: aws.sqs,
      queueUrl,
      handler,
      batchSize: 15,
      batchingWindowSeconds: 1,
      clock,
    });
    // Assess
    expect(invocations.map((i) => i.ids.length)).toEqual([15, 10]);
    expect(first).toEqual({ received: 15, deleted: 15, failed: 0 });
    expect(second).toEqual({ received: 10, deleted: 10, failed: 0 });
    expect(new Set(invocations.flatMap((i) => i.ids)).size).toBe(25);
    expect(await aws.drain(queueUrl)).toEqual([]);
  });
});

describe('the event sources of serverless.yml', () => {
  it('are what the local runner polls with: 200 a batch, a window of 1 to 2 s, the concurrency cap kept', () => {
    // Act
    const all = eventSourcesOf(inject('serverlessConfig') as Parameters<typeof eventSourcesOf>[0]);
    // Assess: the delivery queues' sources (the webhook dispatcher's, polled too, has its own settings).
    expect(Object.keys(all).sort()).toEqual(['CaseQueue', 'SalesRegistrationQueue', 'WebhookQueue']);
    const sources = { SalesRegistrationQueue: all.SalesRegistrationQueue, CaseQueue: all.CaseQueue };
    for (const source of Object.values(sources)) {
      expect(source.batchSize).toBe(200);
      expect(source.batchingWindowSeconds).toBeGreaterThanOrEqual(1);
      expect(source.batchingWindowSeconds).toBeLessThanOrEqual(2);
      expect(source.maximumConcurrency).toBeGreaterThanOrEqual(2);
    }
    expect(sources.CaseQueue.functionName).toBe('crmDelivery');
    // The local runner invokes the handler the template deploys (local/handlerEntry.ts).
    expect(sources.CaseQueue.handler).toBe('functions/deliveryWorker.handler');
    expect(sources.SalesRegistrationQueue.handler).toBe('functions/deliveryWorker.handler');
  });
});

describe.each([
  { answers: 'at once', lateMs: 0 },
  { answers: '300 ms late, as on a loaded machine', lateMs: 300 },
])('a held downstream (SQS answering $answers)', ({ lateMs }) => {
  const states = (crm: HoldState) => async (): Promise<Record<Downstream, HoldState>> => ({
    erp: { held: false },
    crm,
  });

  it('gives its queue one batch per probe period, and goes on at once when the hold has closed', async () => {
    // Prepare: the CRM held, its probe due; one message waiting, another arriving after the first batch.
    let crm: HoldState = {
      held: true,
      heldSince: '2026-11-27T03:00:00.000Z',
      nextProbeAt: '2026-11-27T03:59:00.000Z',
    };
    await send('first', 1);
    // The poller's clock stops 20 s after the first batch until the test has looked (its waits run faster than
    // the test's checks). Counted from the first batch, not from the start: the clock may pass 20 s before the
    // first receive has answered, and a clock stopped before the first batch would wait for ever.
    let look: () => void = () => undefined;
    const looked = new Promise<void>((resolve) => {
      look = resolve;
    });
    const sinceFirst = (now: number) => now - (invocations[0]?.at ?? Number.POSITIVE_INFINITY);
    const clock = movedClock(async (now) => {
      if (sinceFirst(now) >= 20_000) await looked;
    });
    const { invocations, handler } = recordingHandler(clock);
    const gate = holdGate({ downstream: 'crm', probeSeconds: 30, states: () => states(crm)(), clock });
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    // Act
    const poller = startPoller({
      sqs: lateSqs(aws.sqs, lateMs),
      queueUrl,
      handler,
      batchSize: 10,
      waitSeconds: 0,
      gate,
      clock,
    });
    await until(() => invocations.length === 1);
    await send('second', 1);
    // Twenty seconds on the poller's clock: still within the period.
    await until(() => sinceFirst(clock.now()) >= 20_000);
    const withinPeriod = invocations.length;
    look();
    await until(() => invocations.length === 2);
    crm = { held: false };
    await send('third', 1);
    await until(() => invocations.length === 3);
    await poller.stop();
    // Assess
    expect(withinPeriod).toBe(1);
    expect(invocations.map((i) => i.ids)).toEqual([['first-0'], ['second-0'], ['third-0']]);
    expect((invocations[1].at ?? 0) - (invocations[0].at ?? 0)).toBeGreaterThanOrEqual(30_000);
  }, 60_000);

  it('reads both holds once per cache period, however many pollers ask', async () => {
    // Prepare
    let reads = 0;
    const clock = movedClock();
    const cached = cachedHoldStates(
      5000,
      async () => {
        reads++;
        return { erp: { held: false }, crm: { held: false } };
      },
      clock,
    );
    // Act
    await Promise.all([cached(), cached(), cached()]);
    await clock.sleep(4999);
    await cached();
    await clock.sleep(1);
    await cached();
    // Assess
    expect(reads).toBe(2);
  });
});
