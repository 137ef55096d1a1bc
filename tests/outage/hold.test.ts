/**
 * The downstream hold (lib/outage) against the real dynalite, the clock given: its rules (threshold, two records,
 * a success or a refusal ends a streak, probe spacing, closing, the Salesforce allowance), two worker instances
 * sharing one hold through conditional writes, and what it costs a delivery that changes nothing.
 */
import { DynamoDBClient, GetItemCommand, type GetItemCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDownstreamHolds, type DownstreamHolds, holdStates } from '../../lib/outage/hold.ts';
import { claimProbeWrite, readHold, readHolds, writeHold } from '../../lib/outage/holdStore.ts';
import type { Downstream, NotedOutcome } from '../../lib/outage/types.ts';
import type { OutageSettings } from '../../lib/settings/settings.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';

/** The service's DynamoDB calls pass this proxy, which counts them and can run a racing write in between. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

beforeAll(async () => {
  const aws = await freshAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
});

afterAll(() => dynamo.stop());

beforeEach(async () => {
  await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  dynamo.reset();
});

const SETTINGS: OutageSettings = {
  afterFailures: 5,
  probeSeconds: 30,
  failureRate: 0.5,
  rateWindow: 20,
  apiUsageShare: 0.8,
  cacheSeconds: 5,
};
const T0 = new Date('2026-11-27T03:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

/** A worker instance (a Lambda container): its own cache, the shared table. */
const worker = (settings: Partial<OutageSettings> = {}) =>
  createDownstreamHolds({ ...SETTINGS, ...settings });

/** Notes outcomes one after the other, a second apart from `from`, and returns the transitions they caused. */
const noteInTurn = async (
  holds: DownstreamHolds,
  outcomes: NotedOutcome[],
  from = 0,
  downstream: Downstream = 'erp',
) => {
  const transitions = [];
  for (const [index, outcome] of outcomes.entries()) {
    const transition = await holds.noteOutcome(downstream, outcome, at(from + index));
    if (transition) transitions.push(transition);
  }
  return transitions;
};
const failures = (...ids: string[]): NotedOutcome[] =>
  ids.map((recordId) => ({ recordId, kind: 'transient' }));

describe('when a downstream is held', () => {
  it('opens after OUTAGE_AFTER_FAILURES transient failures in a row of two records, not one sooner', async () => {
    // Prepare
    const holds = worker();
    // Act
    const afterFour = await noteInTurn(holds, failures('a', 'b', 'a', 'b'));
    const stateAfterFour = await holds.holdState('erp', { fresh: true, now: at(4) });
    const fifth = await holds.noteOutcome('erp', { recordId: 'c', kind: 'transient' }, at(4));
    // Assess
    expect(afterFour).toEqual([]);
    expect(stateAfterFour).toEqual({ held: false });
    expect(fifth).toEqual({ downstream: 'erp', change: 'opened', reason: 'outage', heldSince: iso(4) });
    expect(await worker().holdState('erp', { now: at(4) })).toEqual({
      held: true,
      heldSince: iso(4),
      reason: 'outage',
      nextProbeAt: iso(34),
    });
    // The CRM's hold is its own.
    expect((await holdStates()).crm).toEqual({ held: false });
  });

  it('opens for one record failing alone at a quiet hour: the failures in a row count whatever the records', async () => {
    // Prepare
    const holds = worker();
    // Act: one record, four transient failures in a row, then its fifth.
    const four = await noteInTurn(holds, failures(...Array(4).fill('lone')));
    const before = (await holds.holdState('erp', { fresh: true, now: at(4) })).held;
    const fifth = await holds.noteOutcome('erp', { recordId: 'lone', kind: 'transient' }, at(4));
    // Assess: the fifth failure in a row opens it (OUTAGE_AFTER_FAILURES 5), not one before.
    expect(four).toEqual([]);
    expect(before).toBe(false);
    expect(fifth).toMatchObject({ change: 'opened', reason: 'outage' });
  });

  it('a delivery between failures ends the streak, also when another worker instance counted them', async () => {
    // Prepare: four failures counted by one instance.
    const counting = worker();
    const delivering = worker();
    await noteInTurn(counting, failures('a', 'b', 'a', 'b'));
    // Act: another instance delivers a record, then failures resume.
    await delivering.noteOutcome('erp', { recordId: 'c', kind: 'delivered' }, at(4));
    const resumed = await noteInTurn(counting, failures('a', 'b', 'a', 'b'), 5);
    const fifth = await counting.noteOutcome('erp', { recordId: 'a', kind: 'transient' }, at(9));
    // Assess: eight failures, but not in a row; the fifth in a row opens it.
    expect(resumed).toEqual([]);
    expect(fifth).toMatchObject({ change: 'opened' });
  });

  it('never opens on permanent refusals, and a refusal ends a streak: the downstream answered', async () => {
    // Prepare
    const holds = worker();
    const refusals: NotedOutcome[] = Array.from({ length: 20 }, (_, i) => ({
      recordId: `r${i}`,
      kind: 'permanent',
    }));
    // Act
    const fromRefusals = await noteInTurn(holds, refusals);
    const mixed = await noteInTurn(
      holds,
      [
        ...failures('a', 'b', 'a', 'b'),
        { recordId: 'c', kind: 'permanent' },
        ...failures('a', 'b', 'a', 'b'),
      ],
      20,
    );
    // Assess
    expect(fromRefusals).toEqual([]);
    expect(mixed).toEqual([]);
    expect((await holds.holdState('erp', { fresh: true, now: at(40) })).held).toBe(false);
  });

  it('opens once when two worker instances count the last failures at the same moment', async () => {
    // Prepare: four failures; then the racing instance's failure lands between the other's read and write.
    const first = worker();
    const second = worker();
    await noteInTurn(first, failures('a', 'b', 'a', 'b'));
    dynamo.before('UpdateItem', async () => {
      racing = await second.noteOutcome('erp', { recordId: 'd', kind: 'transient' }, at(4));
    });
    let racing: Awaited<ReturnType<DownstreamHolds['noteOutcome']>>;
    // Act
    const own = await first.noteOutcome('erp', { recordId: 'c', kind: 'transient' }, at(4));
    // Assess: the race happened; exactly one of the two opened it, and the other's failure was not lost.
    expect(dynamo.pending()).toEqual([]);
    expect([own, racing].filter((t) => t?.change === 'opened')).toHaveLength(1);
    expect(await readHold('erp')).toMatchObject({ held: true, heldSince: iso(4), failures: 0 });
  });
});

/** Opens the ERP hold at T0 (five failures ending at 0 s), through an instance of its own. */
const openAtT0 = async () => {
  const opener = worker();
  const transitions = await noteInTurn(opener, failures('a', 'b', 'a', 'b', 'c'), -4);
  expect(transitions).toMatchObject([{ change: 'opened', heldSince: iso(0) }]);
};

describe('while a downstream is held', () => {
  /** Every caller asks at once; returns how many got the probe and what the others were told. */
  const askAtOnce = async (callers: DownstreamHolds[], seconds: number) => {
    const permits = await Promise.all(callers.map((holds) => holds.mayDeliver('erp', at(seconds))));
    return {
      probes: permits.filter((p) => p.deliver && p.probe).length,
      plain: permits.filter((p) => p.deliver && !p.probe).length,
      waits: [...new Set(permits.flatMap((p) => (p.deliver ? [] : [p.until])))],
    };
  };

  it('grants exactly one probe per OUTAGE_PROBE_SECONDS among two concurrent workers; the others wait until the next', async () => {
    // Prepare: two instances, four concurrent callers each.
    await openAtT0();
    const a = worker();
    const b = worker();
    const callers = [a, a, a, a, b, b, b, b];
    // Act
    const early = await askAtOnce(callers, 10);
    const due = await askAtOnce(callers, 30);
    const between = await askAtOnce(callers, 45);
    const dueAgain = await askAtOnce(callers, 61);
    // Assess
    expect(early).toEqual({ probes: 0, plain: 0, waits: [iso(30)] });
    expect(due).toEqual({ probes: 1, plain: 0, waits: [iso(60)] });
    expect(between).toEqual({ probes: 0, plain: 0, waits: [iso(60)] });
    expect(dueAgain).toEqual({ probes: 1, plain: 0, waits: [iso(91)] });
  });

  it('keeps the hold after a failed probe; the first successful probe closes it and every worker delivers again', async () => {
    // Prepare
    await openAtT0();
    const a = worker();
    const b = worker();
    // Act: a failed probe at 30 s, a successful one at 60 s.
    const firstProbe = await a.mayDeliver('erp', at(30));
    const afterFailed = await a.noteOutcome(
      'erp',
      { recordId: 'p1', kind: 'transient', probe: true },
      at(31),
    );
    const stillHeld = await b.mayDeliver('erp', at(40));
    const secondProbe = await b.mayDeliver('erp', at(60));
    const closed = await b.noteOutcome('erp', { recordId: 'p2', kind: 'delivered', probe: true }, at(61));
    // Assess
    expect(firstProbe).toEqual({ deliver: true, probe: true });
    expect(afterFailed).toBeUndefined();
    expect(stillHeld).toEqual({ deliver: false, until: iso(60), heldSince: iso(0), reason: 'outage' });
    expect(secondProbe).toEqual({ deliver: true, probe: true });
    expect(closed).toEqual({
      downstream: 'erp',
      change: 'closed',
      reason: 'outage',
      heldSince: iso(0),
      closedAt: iso(61),
      heldSeconds: 61,
    });
    // Once its cache has aged, the other instance delivers too, without a probe.
    expect(await a.mayDeliver('erp', at(61 + SETTINGS.cacheSeconds))).toEqual({
      deliver: true,
      probe: false,
    });
    expect(await readHold('erp')).toMatchObject({ held: false, heldSince: iso(0), closedAt: iso(61) });
  });

  it('does not count failures of calls still under way when it opened, nor open twice', async () => {
    // Prepare
    await openAtT0();
    const holds = worker();
    // Act
    const late = await noteInTurn(holds, failures('x', 'y', 'x', 'y', 'x', 'y'), 1);
    // Assess
    expect(late).toEqual([]);
    expect(await readHold('erp')).toMatchObject({ held: true, heldSince: iso(0), failures: 0 });
  });
});

describe('the Salesforce API allowance', () => {
  const usage = (used: number, kind: NotedOutcome['kind'] = 'delivered', probe = false): NotedOutcome => ({
    recordId: `case-${used}`,
    kind,
    probe,
    apiUsage: { used, allowed: 100 },
  });

  it('holds the CRM at CRM_API_USAGE_SHARE of the allowance, not below; a probe showing usage below closes it', async () => {
    // Prepare
    const holds = worker();
    // Act
    const below = await holds.noteOutcome('crm', usage(79), at(0));
    const atShare = await holds.noteOutcome('crm', usage(80), at(1));
    const probeHigh = await holds.noteOutcome('crm', usage(85, 'delivered', true), at(31));
    const probeWithoutUsage = await holds.noteOutcome(
      'crm',
      { recordId: 'no-header', kind: 'delivered', probe: true },
      at(61),
    );
    const probeLow = await holds.noteOutcome('crm', usage(12, 'delivered', true), at(91));
    // Assess
    expect(below).toBeUndefined();
    expect(atShare).toEqual({ downstream: 'crm', change: 'opened', reason: 'api-usage', heldSince: iso(1) });
    expect(probeHigh).toBeUndefined();
    expect(probeWithoutUsage).toBeUndefined();
    expect(probeLow).toMatchObject({ change: 'closed', reason: 'api-usage', heldSeconds: 90 });
    expect((await holdStates()).erp).toEqual({ held: false });
  });

  it('noteApiUsage alone opens and closes it; an outage hold whose probe shows usage high stays held for the allowance', async () => {
    // Prepare
    const holds = worker();
    // Act
    const opened = await holds.noteApiUsage(95, 100, at(0));
    const closed = await holds.noteApiUsage(10, 100, at(30));
    await noteInTurn(holds, failures('a', 'b', 'a', 'b', 'c'), 40, 'crm');
    const outageProbe = await holds.noteOutcome('crm', usage(90, 'delivered', true), at(80));
    const state = await holds.holdState('crm', { fresh: true, now: at(80) });
    // Assess
    expect(opened).toMatchObject({ change: 'opened', reason: 'api-usage' });
    expect(closed).toMatchObject({ change: 'closed' });
    expect(outageProbe).toBeUndefined();
    expect(state).toMatchObject({ held: true, reason: 'api-usage', heldSince: iso(44) });
  });
  it('while held for the allowance, a failed call showing usage below the share keeps it; an answer closes it', async () => {
    // Prepare
    const holds = worker();
    await holds.noteApiUsage(95, 100, at(0));
    // Act: a probe that fails (503) though Salesforce's header shows usage low, then one that is answered.
    const failedProbe = await holds.noteOutcome('crm', usage(10, 'transient', true), at(30));
    const stateAfterFailure = await holds.holdState('crm', { fresh: true, now: at(30) });
    const answeredProbe = await holds.noteOutcome('crm', usage(10, 'delivered', true), at(60));
    // Assess
    expect(failedProbe).toBeUndefined();
    expect(stateAfterFailure).toMatchObject({ held: true, reason: 'api-usage' });
    expect(answeredProbe).toMatchObject({ change: 'closed', reason: 'api-usage' });
  });

  it('while held for the allowance, further readings at the share write nothing', async () => {
    // Prepare
    const holds = worker();
    await holds.noteApiUsage(95, 100, at(0));
    dynamo.reset();
    // Act: within the cache period, an answered probe and a reading alone, both still at the share.
    const probe = await holds.noteOutcome('crm', usage(90, 'delivered', true), at(1));
    const reading = await holds.noteApiUsage(97, 100, at(2));
    // Assess
    expect([probe, reading]).toEqual([undefined, undefined]);
    expect(dynamo.calls).toEqual([]);
  });

  it('a reading alone is not a failure: it neither adds to a streak nor, below the share, ends it', async () => {
    // Prepare: four failures of two records, one short of the threshold.
    const holds = worker();
    await noteInTurn(holds, failures('a', 'b', 'a', 'b'), 0, 'crm');
    // Act
    const reading = await holds.noteApiUsage(10, 100, at(4));
    const fifth = await holds.noteOutcome('crm', { recordId: 'c', kind: 'transient' }, at(5));
    // Assess
    expect(reading).toBeUndefined();
    expect(fifth).toMatchObject({ change: 'opened', reason: 'outage' });
  });

  it("keeps the last reading for the console's Downstreams page: alone at most once a minute, else with a write the hold makes anyway", async () => {
    // Prepare: the CRM's window full of answered calls, so that a success writes nothing of its own.
    const holds = worker();
    const answered = Array.from({ length: SETTINGS.rateWindow }, (_, i) => ({
      recordId: `ok${i}`,
      kind: 'delivered' as const,
    }));
    await noteInTurn(holds, answered, -30, 'crm');
    dynamo.reset();
    const writes = () => dynamo.calls.filter((call) => call === 'UpdateItem').length;
    // Act: readings on successes at 0 s (none stored yet), 1 s and 59 s (one stored), 60 s (a minute old); then a
    // failure, which writes the hold anyway, at 62 s.
    await holds.noteOutcome('crm', usage(10), at(0));
    const first = { stored: (await readHold('crm')).apiUsage, writes: writes() };
    await holds.noteOutcome('crm', usage(11), at(1));
    await holds.noteOutcome('crm', usage(12), at(59));
    const withinMinute = { stored: (await readHold('crm')).apiUsage, writes: writes() };
    await holds.noteOutcome('crm', usage(13), at(60));
    const minuteOld = { stored: (await readHold('crm')).apiUsage, writes: writes() };
    await holds.noteOutcome('crm', usage(14, 'transient'), at(62));
    const withFailure = { stored: await readHold('crm'), writes: writes() };
    // Assess
    expect(first).toEqual({ stored: { used: 10, allowed: 100, at: iso(0) }, writes: 1 });
    expect(withinMinute).toEqual({ stored: { used: 10, allowed: 100, at: iso(0) }, writes: 1 });
    expect(minuteOld).toEqual({ stored: { used: 13, allowed: 100, at: iso(60) }, writes: 2 });
    expect(withFailure.stored).toMatchObject({
      failures: 1,
      apiUsage: { used: 14, allowed: 100, at: iso(62) },
    });
    expect(withFailure.writes).toBe(3);
    expect((await readHold('erp')).apiUsage).toBeUndefined();
  });

  it('an allowance of 0 says nothing: it neither holds the CRM nor frees a CRM held for the allowance', async () => {
    // Prepare
    const holds = worker();
    // Act
    const spentOfNone = await holds.noteApiUsage(5, 0, at(0));
    const stateAfterSpent = await holds.holdState('crm', { fresh: true, now: at(0) });
    await holds.noteApiUsage(95, 100, at(1));
    const noneOfNone = await holds.noteApiUsage(0, 0, at(31));
    const stateAfterNone = await holds.holdState('crm', { fresh: true, now: at(31) });
    // Assess
    expect(spentOfNone).toBeUndefined();
    expect(stateAfterSpent).toEqual({ held: false });
    expect(noneOfNone).toBeUndefined();
    expect(stateAfterNone).toMatchObject({ held: true, reason: 'api-usage' });
  });
});

/** Counts `count` answered calls, a second apart from `from`: the window of recent calls full of answers. */
const answeredCalls = (holds: DownstreamHolds, count: number, from = 0) =>
  noteInTurn(
    holds,
    Array.from({ length: count }, (_, i) => ({ recordId: `ok${i}`, kind: 'delivered' as const })),
    from,
  );

describe('what the hold costs a delivery', () => {
  it('a success while the last OUTAGE_RATE_WINDOW calls were all answered reads the hold once per cache period and never writes it', async () => {
    // Prepare: the window full of answered calls.
    const holds = worker();
    await answeredCalls(holds, SETTINGS.rateWindow, -30);
    dynamo.reset();
    const delivered = Array.from({ length: 10 }, (_, i) => ({
      recordId: `d${i}`,
      kind: 'delivered' as const,
    }));
    // Act: ten deliveries within four seconds, then one after the cache period.
    for (const [i, outcome] of delivered.entries()) {
      await holds.mayDeliver('erp', at(i * 0.4));
      await holds.noteOutcome('erp', outcome, at(i * 0.4));
    }
    await holds.mayDeliver('erp', at(SETTINGS.cacheSeconds));
    // Assess
    expect(dynamo.calls).toEqual(['GetItem', 'GetItem']);
  });

  it('any other call is one conditional write over the hold as last read: filling the window, or a failure in it', async () => {
    // Prepare: the window full but for one failed call.
    const holds = worker();
    await answeredCalls(holds, SETTINGS.rateWindow - 1, -30);
    await holds.noteOutcome('erp', { recordId: 'f', kind: 'transient' }, at(-1));
    dynamo.reset();
    // Act: three calls as a worker makes them, each after its permit's read.
    for (const [i, kind] of (['delivered', 'delivered', 'transient'] as const).entries()) {
      await holds.mayDeliver('erp', at(i), { fresh: true });
      await holds.noteOutcome('erp', { recordId: `c${i}`, kind }, at(i));
    }
    // Assess: a read and a write per call, no more.
    expect(dynamo.calls).toEqual(['GetItem', 'UpdateItem', 'GetItem', 'UpdateItem', 'GetItem', 'UpdateItem']);
    expect(await readHold('erp')).toMatchObject({ recentCalls: `${'0'.repeat(16)}1001`, failures: 1 });
  });

  it('a transient failure is one consistent read and one conditional write', async () => {
    // Prepare
    const holds = worker();
    // Act
    await holds.noteOutcome('erp', { recordId: 'a', kind: 'transient' }, at(0));
    // Assess
    expect(dynamo.calls).toEqual(['GetItem', 'UpdateItem']);
    expect(dynamo.requests[0].body).toMatchObject({ ConsistentRead: true });
    expect(dynamo.requests[1].body).toHaveProperty('ConditionExpression');
  });
});

describe('a batched call', () => {
  it('counts its parts in order in one write: failures of several records open the hold, a part delivered after them closes it', async () => {
    // Prepare
    const holds = worker();
    const parts: NotedOutcome[] = [
      ...failures('a', 'b', 'c', 'd', 'e'),
      { recordId: 'f', kind: 'delivered' },
    ];
    // Act
    const transitions = await holds.noteOutcomes('erp', parts, at(0));
    const refusedOnly = await holds.noteOutcomes('erp', [{ recordId: 'g', kind: 'permanent' }], at(1));
    // Assess
    expect(transitions.map((t) => t.change)).toEqual(['opened', 'closed']);
    expect(refusedOnly).toEqual([]);
    // One write per call, whatever its parts: the batched call's, then the refusal's (the window).
    expect(dynamo.calls.filter((call) => call === 'UpdateItem')).toHaveLength(2);
  });
});

describe("an instance's cache of the hold", () => {
  it('is read again once cacheSeconds have passed: a hold another instance opened meanwhile is seen', async () => {
    // Prepare: this instance reads the hold (not held) at 0 s; another opens it at 1 s.
    const holds = worker();
    await holds.mayDeliver('erp', at(0));
    await noteInTurn(worker(), failures('a', 'b', 'a', 'b', 'c'), -3);
    // Act
    const withinPeriod = await holds.mayDeliver('erp', at(SETTINGS.cacheSeconds - 1));
    const afterPeriod = await holds.mayDeliver('erp', at(SETTINGS.cacheSeconds));
    // Assess
    expect(withinPeriod).toEqual({ deliver: true, probe: false });
    expect(afterPeriod).toMatchObject({ deliver: false, heldSince: iso(1) });
  });

  it('counts a clock moved back as stale, and reads again', async () => {
    // Prepare: read at 10 s; the hold opened by another instance at 1 s.
    const holds = worker();
    await holds.mayDeliver('erp', at(10));
    await noteInTurn(worker(), failures('a', 'b', 'a', 'b', 'c'), -3);
    // Act
    const earlier = await holds.mayDeliver('erp', at(9));
    // Assess
    expect(earlier).toMatchObject({ deliver: false, heldSince: iso(1) });
  });

  it('writes a change over the version it last read, with no further read', async () => {
    // Prepare: the hold read (and cached) at 0 s.
    const holds = worker();
    await holds.mayDeliver('erp', at(0));
    // Act
    await holds.noteOutcome('erp', { recordId: 'a', kind: 'transient' }, at(1));
    // Assess
    expect(dynamo.calls).toEqual(['GetItem', 'UpdateItem']);
    expect(dynamo.requests[1].body).toMatchObject({
      ConditionExpression: expect.stringContaining('#version = :seen'),
    });
  });

  it('computes a change again on a consistent read when another instance wrote first, and reports only what that shows', async () => {
    // Prepare: this instance counted one failure; another instance's delivery has ended that streak since.
    const holds = worker();
    await holds.noteOutcome('erp', { recordId: 'a', kind: 'transient' }, at(0));
    await worker().noteOutcome('erp', { recordId: 'b', kind: 'delivered' }, at(1));
    dynamo.reset();
    // Act: by its cache, this delivery ends a streak; by the table, there is none.
    const transition = await holds.noteOutcome('erp', { recordId: 'c', kind: 'delivered' }, at(2));
    // Assess: the write over the cached version lost; the one over the fresh read counts the call alone.
    expect(transition).toBeUndefined();
    expect(dynamo.calls).toEqual(['UpdateItem', 'GetItem', 'UpdateItem']);
    expect(await readHold('erp')).toMatchObject({ failures: 0, recentCalls: '100', callsSinceClose: 3 });
  });

  it('gives up after MAX_WRITE_ROUNDS lost compare-and-sets in a row, naming the downstream', async () => {
    // Prepare: every conditional write of the hold finds another instance's write first.
    const holds = worker();
    for (let i = 0; i < 6; i++)
      dynamo.before('UpdateItem', async () => ({ status: 400, type: 'ConditionalCheckFailedException' }));
    // Act
    const noted = holds.noteOutcome('erp', { recordId: 'a', kind: 'transient' }, at(0));
    // Assess
    await expect(noted).rejects.toThrow('hold of erp: 5 concurrent writes in a row, gave up');
    expect(dynamo.calls.filter((call) => call === 'UpdateItem')).toHaveLength(5);
  });

  it('while held and the probe is not due, waits without a write', async () => {
    // Prepare
    await openAtT0();
    const holds = worker();
    dynamo.reset();
    // Act
    const first = await holds.mayDeliver('erp', at(10));
    const second = await holds.mayDeliver('erp', at(11));
    // Assess
    expect([first, second]).toEqual([
      { deliver: false, until: iso(30), heldSince: iso(0), reason: 'outage' },
      { deliver: false, until: iso(30), heldSince: iso(0), reason: 'outage' },
    ]);
    expect(dynamo.calls).toEqual(['GetItem']);
  });

  it('remembers a probe it was granted: asked again within the period, it waits without a call', async () => {
    // Prepare
    await openAtT0();
    const holds = worker();
    dynamo.reset();
    // Act
    const probe = await holds.mayDeliver('erp', at(30));
    const next = await holds.mayDeliver('erp', at(31));
    // Assess
    expect(probe).toEqual({ deliver: true, probe: true });
    expect(next).toMatchObject({ deliver: false, until: iso(60) });
    expect(dynamo.calls).toEqual(['GetItem', 'UpdateItem']);
  });

  it('forgets what it knew when another instance claimed the probe first', async () => {
    // Prepare: this instance knows the probe due at 30 s; another claims it.
    await openAtT0();
    const holds = worker();
    await holds.mayDeliver('erp', at(29));
    expect(await worker().claimProbe('erp', at(30))).toBe(true);
    // Act
    const claimed = await holds.claimProbe('erp', at(30));
    const state = await holds.holdState('erp', { now: at(30) });
    // Assess
    expect(claimed).toBe(false);
    expect(state).toMatchObject({ held: true, nextProbeAt: iso(60) });
  });

  it('names the reason of an allowance hold to the messages that wait', async () => {
    // Prepare
    await worker().noteApiUsage(90, 100, at(0));
    // Act
    const permit = await worker().mayDeliver('crm', at(10));
    // Assess
    expect(permit).toEqual({ deliver: false, until: iso(30), heldSince: iso(0), reason: 'api-usage' });
  });

  it('reports the state as of now when asked without a time', async () => {
    // Prepare
    await openAtT0();
    // Act
    const state = await worker().holdState('erp');
    // Assess
    expect(state).toEqual({ held: true, heldSince: iso(0), reason: 'outage', nextProbeAt: iso(30) });
  });
});

describe('the hold items in the table', () => {
  it('reads both holds in one consistent BatchGetItem, each named for its downstream before any was written', async () => {
    // Act
    const holds = await readHolds();
    // Assess
    expect(holds.erp).toMatchObject({ downstream: 'erp', held: false, version: 0 });
    expect(holds.crm).toMatchObject({ downstream: 'crm', held: false, version: 0 });
    expect(dynamo.calls).toEqual(['BatchGetItem']);
    expect(Object.values(dynamo.requests[0].body.RequestItems as object)[0]).toMatchObject({
      ConsistentRead: true,
    });
  });

  it("reads through an operator's reader with one GetItem each, naming the attributes", async () => {
    // Prepare: the reader passes the same table; it records what it was asked.
    await openAtT0();
    const asked: GetItemCommandInput[] = [];
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint });
    const reader = {
      query: async () => {
        throw new Error('no query expected');
      },
      getItem: async (input: GetItemCommandInput) => {
        asked.push(input);
        return client.send(new GetItemCommand(input));
      },
    };
    // Act
    const holds = await readHolds(reader);
    // Assess
    expect(holds.erp).toMatchObject({ downstream: 'erp', held: true, heldSince: iso(0) });
    expect(holds.crm).toMatchObject({ downstream: 'crm', held: false });
    expect(asked).toHaveLength(2);
    for (const input of asked)
      expect(input).toMatchObject({ ConsistentRead: true, ProjectionExpression: expect.any(String) });
  });

  it('a change computed before a probe was claimed does not move probeAt back', async () => {
    // Prepare: a change computed over the hold as read at 29 s; the probe of 30 s claimed before it is written.
    await openAtT0();
    const current = await readHold('erp');
    expect(await claimProbeWrite('erp', at(30), iso(60))).toBeDefined();
    // Act
    const written = await writeHold(current, {
      ...current,
      version: current.version + 1,
      updatedAt: iso(31),
    });
    // Assess
    expect(written).toBe(true);
    expect(await readHold('erp')).toMatchObject({ probeAt: iso(60), updatedAt: iso(31) });
  });
});
