import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt, reopenFailedRecord } from '../../lib/store/statusUpdates.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

/** The service's DynamoDB calls pass this proxy, which can answer a call with an error of its own. */
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

const NOW = new Date('2026-11-22T08:10:00.000Z');
const iso = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

const accepted = acceptedCase;

describe('claimRecord', () => {
  it('claims an accepted record nobody holds: the lease set and the try counted, nothing else (no index attribute), the record returned as it is now', async () => {
    // Prepare
    const record = accepted();
    await seedStatusRecords([record]);
    // Act
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    // Assess
    expect(claim).toEqual({ claimed: { ...record, leaseUntil: iso(90), tries: 1 } });
    expect(await getStatusRecord(record.id)).toEqual({ ...record, leaseUntil: iso(90), tries: 1 });
  });

  it('counts each claim as a try, and no refused claim', async () => {
    // Prepare: a record tried twice before.
    const record = accepted({ tries: 2 });
    await seedStatusRecords([record]);
    // Act: claimed, then a second claim while the lease runs (a bounced copy).
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    const bounced = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    // Assess
    expect(claim.claimed?.tries).toBe(3);
    expect(bounced).toEqual({ current: { ...record, leaseUntil: iso(90), tries: 3 } });
  });

  it('claims a record whose lease ran out before now', async () => {
    const record = accepted({ leaseUntil: iso(-0.001) });
    await seedStatusRecords([record]);
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    expect(claim.claimed).toMatchObject({ leaseUntil: iso(90) });
  });

  it('does not claim a record leased until now or later, and returns it as it is', async () => {
    // Prepare
    const endsNow = accepted({ leaseUntil: iso(0) });
    const endsLater = accepted({ leaseUntil: iso(30) });
    await seedStatusRecords([endsNow, endsLater]);
    // Act
    const claims = await Promise.all(
      [endsNow, endsLater].map((r) => claimRecord(r.id, { now: NOW, leaseUntil: iso(90) })),
    );
    // Assess
    expect(claims).toEqual([{ current: endsNow }, { current: endsLater }]);
    expect(await getStatusRecord(endsLater.id)).toEqual(endsLater);
  });

  it('does not claim a settled record, and says so for a record that does not exist', async () => {
    const delivered = accepted({ status: 'delivered', openKind: undefined, dueAt: undefined });
    await seedStatusRecords([delivered]);
    const claims = await Promise.all(
      [delivered.id, 'd'.repeat(32)].map((id) => claimRecord(id, { now: NOW, leaseUntil: iso(90) })),
    );
    expect(claims).toEqual([{ current: delivered }, { current: undefined }]);
  });

  it('throws what is no refused condition, without reading the record', async () => {
    // Prepare: DynamoDB refuses the claim's write itself (not its condition).
    const record = accepted();
    await seedStatusRecords([record]);
    dynamo.reset();
    dynamo.before('UpdateItem', () => ({
      status: 400,
      type: 'com.amazonaws.dynamodb.v20120810#ValidationException',
    }));
    // Act
    const outcome = claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    // Assess
    await expect(outcome).rejects.toMatchObject({ name: 'ValidationException' });
    expect(dynamo.calls).toEqual(['UpdateItem']);
  });
});

describe('recordAttempt', () => {
  const claimed = async (changes: Partial<StatusRecord> = {}) => {
    const record = accepted(changes);
    await seedStatusRecords([record]);
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90) });
    if (!claim.claimed) throw new Error('not claimed');
    return claim.claimed;
  };
  const DAY = 86_400;

  it('a delivery: delivered, one more attempt, out of the open index, the event in the outbox, retention dated', async () => {
    // Prepare: a record with an earlier attempt's error.
    const record = await claimed({ attempts: 2, error: 'HTTP 503' });
    // Act
    const written = await recordAttempt(
      record,
      { status: 'delivered', attempts: 1, downstreamId: '49000017', at: NOW },
      iso(90),
    );
    // Assess: what it returns is what is stored.
    const { openKind: _o, dueAt: _d, error: _e, leaseUntil: _l, ...rest } = record;
    // The outbox keeps only what the record does not say (lib/events/stateChange.ts eventOf adds the rest).
    const event = {
      state: 'delivered',
      previousState: 'accepted',
      attempts: 3,
      sequence: 1,
      at: NOW.toISOString(),
      downstreamId: '49000017',
    };
    const stored = await getStatusRecord(record.id);
    expect(written).toEqual(stored);
    expect(stored).toEqual({
      ...rest,
      status: 'delivered',
      statusKey: 'caseRecord#delivered',
      attempts: 3,
      downstreamId: '49000017',
      updatedAt: NOW.toISOString(),
      history: [{ at: NOW.toISOString(), status: 'delivered', reached: true, downstreamId: '49000017' }],
      pendingEvents: [event],
      eventSequence: 1,
      eventsKind: 'caseRecord',
      eventsDueAt: iso(60),
      purgeKind: 'caseRecord',
      purgeAt: iso(30 * DAY),
      expiresAt: NOW.getTime() / 1000 + 400 * DAY,
    });
  });

  it('a refusal: rejected with its error, out of the open index, the error in history and event', async () => {
    const record = await claimed();
    await recordAttempt(
      record,
      { status: 'rejected', attempts: 1, error: 'Dealer blocked', at: NOW },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({
      status: 'rejected',
      statusKey: 'caseRecord#rejected',
      attempts: 1,
      error: 'Dealer blocked',
      history: [{ status: 'rejected', reached: true, error: 'Dealer blocked' }],
      pendingEvents: [{ state: 'rejected', attempts: 1, error: 'Dealer blocked' }],
    });
    expect(stored).not.toHaveProperty('openKind');
    expect(stored).not.toHaveProperty('dueAt');
    expect(stored).not.toHaveProperty('downstreamId');
  });

  it('failed: personal data kept twice as long', async () => {
    const record = await claimed({ attempts: 4 });
    await recordAttempt(record, { status: 'failed', attempts: 1, error: 'HTTP 503', at: NOW }, iso(90));
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'failed',
      statusKey: 'caseRecord#failed',
      purgeAt: iso(60 * DAY),
      expiresAt: NOW.getTime() / 1000 + 400 * DAY,
      pendingEvents: [{ state: 'failed', attempts: 5 }],
    });
  });

  it('never brings an expiry forward: a first record kept for a newer generation keeps its later expiresAt', async () => {
    // Prepare: a newer generation of the content extended the record's expiry beyond its own 400 days.
    const later = NOW.getTime() / 1000 + 500 * DAY;
    const record = await claimed({ expiresAt: later });
    // Act
    await recordAttempt(record, { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW }, iso(90));
    // Assess
    expect(await getStatusRecord(record.id)).toMatchObject({ status: 'delivered', expiresAt: later });
  });

  it('a transient failure: still accepted, in the open index, due when given, lease gone; no event, no retention', async () => {
    const record = await claimed();
    await recordAttempt(
      record,
      { status: 'accepted', attempts: 1, error: 'HTTP 503', at: NOW, dueAt: iso(330) },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({
      status: 'accepted',
      statusKey: 'caseRecord#accepted',
      attempts: 1,
      error: 'HTTP 503',
      openKind: 'caseRecord',
      dueAt: iso(330),
      history: [{ status: 'accepted', reached: true, error: 'HTTP 503' }],
    });
    for (const absent of ['leaseUntil', 'pendingEvents', 'eventsKind', 'purgeAt', 'expiresAt'])
      expect(stored).not.toHaveProperty(absent);
  });

  it('appends to the history and the outbox: each attempt one step, oldest first', async () => {
    // Prepare: one transient failure recorded, then claimed again.
    const record = await claimed();
    await recordAttempt(
      record,
      { status: 'accepted', attempts: 0, error: 'not attempted: x', at: NOW },
      iso(90),
    );
    const later = new Date(NOW.getTime() + 100_000);
    const again = await claimRecord(record.id, { now: later, leaseUntil: iso(200) });
    if (!again.claimed) throw new Error('not claimed');
    // Act
    await recordAttempt(
      again.claimed,
      { status: 'delivered', attempts: 1, downstreamId: '7', at: later },
      iso(200),
    );
    // Assess
    const stored = await getStatusRecord(record.id);
    expect(stored?.history?.map((step) => [step.status, step.reached])).toEqual([
      ['accepted', false],
      ['delivered', true],
    ]);
    expect(stored?.pendingEvents).toHaveLength(1);
    expect(stored?.pendingEvents?.[0]).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('a settled outcome leaves the open index even when given a due time', async () => {
    const record = await claimed();
    await recordAttempt(
      record,
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW, dueAt: iso(330) },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({ status: 'delivered' });
    expect(stored).not.toHaveProperty('openKind');
    expect(stored).not.toHaveProperty('dueAt');
  });

  it('a transient failure without a due time keeps the one it had', async () => {
    const record = await claimed();
    await recordAttempt(
      record,
      { status: 'accepted', attempts: 0, error: 'not attempted: x', at: NOW },
      iso(90),
    );
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      openKind: 'caseRecord',
      dueAt: '2026-11-22T08:05:00.000Z',
    });
  });

  it('counts from zero on a record that has no attempts yet', async () => {
    const { attempts: _a, ...withoutAttempts } = accepted();
    await seedStatusRecords([withoutAttempts as StatusRecord]);
    await claimRecord(withoutAttempts.id, { now: NOW, leaseUntil: iso(90) });
    await recordAttempt(
      { ...withoutAttempts, attempts: 0 },
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW },
      iso(90),
    );
    expect(await getStatusRecord(withoutAttempts.id)).toMatchObject({ attempts: 1 });
  });

  it('changes nothing, and says so, when the lease is no longer this one', async () => {
    // Prepare: claimed; then the lease ran out and another worker claimed it.
    const record = await claimed();
    const later = new Date(NOW.getTime() + 91_000);
    await claimRecord(record.id, { now: later, leaseUntil: iso(181) });
    const before = await getStatusRecord(record.id);
    // Act
    const written = await recordAttempt(
      record,
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW },
      iso(90),
    );
    // Assess
    expect(written).toBeUndefined();
    expect(await getStatusRecord(record.id)).toEqual(before);
  });

  it('changes nothing on a settled record, even with its last lease', async () => {
    const record = accepted({ status: 'failed', leaseUntil: iso(90), openKind: undefined, dueAt: undefined });
    await seedStatusRecords([record]);
    const written = await recordAttempt(record, { status: 'delivered', attempts: 1, at: NOW }, iso(90));
    expect(written).toBeUndefined();
    expect(await getStatusRecord(record.id)).toEqual(record);
  });
});

describe('reopenFailedRecord', () => {
  const failed = (changes: Partial<StatusRecord> = {}) =>
    accepted({
      status: 'failed',
      attempts: 5,
      error: 'HTTP 503',
      openKind: undefined,
      dueAt: undefined,
      leaseUntil: iso(-60),
      updatedAt: iso(-30),
      purgeKind: 'caseRecord',
      purgeAt: iso(86_400),
      expiresAt: 1,
      ...changes,
    });

  it('puts a failed record back to accepted: open index, history step, accepted event, retention called off', async () => {
    // Prepare: failed, with a lease left over from its last attempt.
    const record = failed();
    await seedStatusRecords([record]);
    // Act
    const reopened = await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) });
    // Assess
    const { leaseUntil: _l, purgeKind: _k, purgeAt: _p, expiresAt: _x, ...rest } = record;
    const stored = await getStatusRecord(record.id);
    expect(reopened).toEqual(stored);
    expect(stored).toEqual({
      ...rest,
      status: 'accepted',
      statusKey: 'caseRecord#accepted',
      updatedAt: NOW.toISOString(),
      openKind: 'caseRecord',
      dueAt: iso(300),
      tries: 0,
      history: [{ at: NOW.toISOString(), status: 'accepted', reached: false, redriven: true }],
      // The console's timeline: the redrive and who made it (no one named: the command line's).
      story: [`r|${NOW.getTime().toString(36)}|npm run redrive`],
      pendingEvents: [
        // The factory's failed record carries no earlier change (no history, no eventSequence).
        { state: 'accepted', previousState: 'failed', attempts: 5, sequence: 1, at: NOW.toISOString() },
      ],
      eventSequence: 1,
      eventsKind: 'caseRecord',
      eventsDueAt: iso(60),
    });
  });

  it('puts a failed test record back in the test records’ own partition of the open index', async () => {
    // Prepare
    const record = failed({ test: true, owner: 'example-dealer-test' });
    await seedStatusRecords([record]);
    // Act
    await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) });
    // Assess: never among the live records a held downstream's probe reads (lib/delivery/isolation.ts).
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'accepted',
      openKind: 'caseRecord#test',
    });
  });

  it('numbers changes one after another: failed 1, redriven 2, delivered 3, each in the same write', async () => {
    // Prepare: a record that failed (its first change) and was redriven (its second).
    const record = failed({ eventSequence: 1 });
    await seedStatusRecords([record]);
    const reopened = await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) });
    const lease = iso(90);
    const { claimed: claimedAgain } = await claimRecord(record.id, { now: NOW, leaseUntil: lease });
    // Act
    const delivered = await recordAttempt(
      claimedAgain as StatusRecord,
      { status: 'delivered', attempts: 1, downstreamId: '500Xx', at: new Date(NOW.getTime() + 1000) },
      lease,
    );
    // Assess
    expect(reopened?.eventSequence).toBe(2);
    expect(delivered?.eventSequence).toBe(3);
    expect(delivered?.pendingEvents?.map((pending) => [pending.state, pending.sequence])).toEqual([
      ['accepted', 2],
      ['delivered', 3],
    ]);
  });

  it('counts the changes of a record settled before they were numbered from its history', async () => {
    // Prepare: failed, redriven, failed again: three changes, written before they were numbered.
    const record = failed({
      history: [
        { at: iso(-300), status: 'failed', reached: true, error: 'HTTP 503' },
        { at: iso(-200), status: 'accepted', reached: false, redriven: true },
        { at: iso(-100), status: 'accepted', reached: true, error: 'HTTP 503' },
        { at: iso(-30), status: 'failed', reached: true, error: 'HTTP 503' },
      ],
    });
    await seedStatusRecords([record]);
    // Act
    const reopened = await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) });
    // Assess: failed, redriven, failed: the redrive now is the fourth change.
    expect(reopened?.pendingEvents?.[0]?.sequence).toBe(4);
  });

  it('leaves a record that is not failed', async () => {
    const record = accepted({ status: 'rejected', openKind: undefined, dueAt: undefined });
    await seedStatusRecords([record]);
    expect(await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) })).toBeUndefined();
    expect(await getStatusRecord(record.id)).toEqual(record);
  });

  it('leaves a failed record that changed since it was read (another redrive got there first)', async () => {
    const record = failed();
    await seedStatusRecords([{ ...record, updatedAt: iso(-10) }]);
    expect(await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) })).toBeUndefined();
  });

  it('leaves a failed record whose personal data is already removed: it could not be delivered', async () => {
    const record = failed({ personalDataRemovedAt: iso(-20) });
    await seedStatusRecords([record]);
    expect(await reopenFailedRecord(record, { at: NOW, dueAt: iso(300) })).toBeUndefined();
    expect(await getStatusRecord(record.id)).toEqual(record);
  });
});
