import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt, reopenFailedRecord } from '../../lib/store/statusUpdates.ts';
import type { StatusRecord } from '../../lib/store/types.ts';
import { acceptedCase } from '../factories/statusRecords.ts';
import { freshAws } from '../support/freshAws.ts';
import { startHookedProxy } from '../support/hookedProxy.ts';
import { seedStatusRecords } from '../support/seedStatus.ts';

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
  it('claims an accepted record nobody holds: the lease set, dueAt moved past it, the record returned as it is now', async () => {
    // Prepare
    const record = accepted();
    await seedStatusRecords([record]);
    // Act
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) });
    // Assess
    expect(claim).toEqual({ claimed: { ...record, leaseUntil: iso(90), dueAt: iso(390) } });
    expect(await getStatusRecord(record.id)).toEqual({ ...record, leaseUntil: iso(90), dueAt: iso(390) });
  });

  it('claims a record whose lease ran out before now', async () => {
    const record = accepted({ leaseUntil: iso(-0.001) });
    await seedStatusRecords([record]);
    const claim = await claimRecord(record.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) });
    expect(claim.claimed).toMatchObject({ leaseUntil: iso(90) });
  });

  it('does not claim a record leased until now or later, and returns it as it is', async () => {
    // Prepare
    const endsNow = accepted({ leaseUntil: iso(0) });
    const endsLater = accepted({ leaseUntil: iso(30) });
    await seedStatusRecords([endsNow, endsLater]);
    // Act
    const claims = await Promise.all(
      [endsNow, endsLater].map((r) => claimRecord(r.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) })),
    );
    // Assess
    expect(claims).toEqual([{ current: endsNow }, { current: endsLater }]);
    expect(await getStatusRecord(endsLater.id)).toEqual(endsLater);
  });

  it('does not claim a settled record, and says so for a record that does not exist', async () => {
    const delivered = accepted({ status: 'delivered', openKind: undefined, dueAt: undefined });
    await seedStatusRecords([delivered]);
    const claims = await Promise.all(
      [delivered.id, 'd'.repeat(32)].map((id) =>
        claimRecord(id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) }),
      ),
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
    const outcome = claimRecord(record.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) });
    // Assess
    await expect(outcome).rejects.toMatchObject({ name: 'ValidationException' });
    expect(dynamo.calls).toEqual(['UpdateItem']);
  });
});

describe('recordAttempt', () => {
  const claimed = async (changes: Partial<StatusRecord> = {}) => {
    const record = accepted(changes);
    await seedStatusRecords([record]);
    await claimRecord(record.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) });
    return record;
  };

  it('a delivery: delivered with the downstream id, one more attempt, out of the open index, lease and error gone', async () => {
    // Prepare: a record with an earlier attempt's error.
    const record = await claimed({ attempts: 2, error: 'HTTP 503' });
    // Act
    const recorded = await recordAttempt(
      record.id,
      { status: 'delivered', attempts: 1, downstreamId: '49000017', at: NOW },
      iso(90),
    );
    // Assess
    expect(recorded).toBe(true);
    const { openKind: _o, dueAt: _d, error: _e, ...rest } = record;
    expect(await getStatusRecord(record.id)).toEqual({
      ...rest,
      status: 'delivered',
      attempts: 3,
      downstreamId: '49000017',
      updatedAt: NOW.toISOString(),
    });
  });

  it('a refusal: rejected with its error, out of the open index', async () => {
    const record = await claimed();
    await recordAttempt(
      record.id,
      { status: 'rejected', attempts: 1, error: 'Dealer blocked', at: NOW },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({ status: 'rejected', attempts: 1, error: 'Dealer blocked' });
    expect(stored).not.toHaveProperty('openKind');
    expect(stored).not.toHaveProperty('dueAt');
    expect(stored).not.toHaveProperty('downstreamId');
  });

  it('a transient failure: still accepted, in the open index, due when given, lease gone', async () => {
    const record = await claimed();
    await recordAttempt(
      record.id,
      { status: 'accepted', attempts: 1, error: 'HTTP 503', at: NOW, dueAt: iso(330) },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({
      status: 'accepted',
      attempts: 1,
      error: 'HTTP 503',
      openKind: 'caseRecord',
      dueAt: iso(330),
    });
    expect(stored).not.toHaveProperty('leaseUntil');
  });

  it('a settled outcome leaves the open index even when given a due time', async () => {
    const record = await claimed();
    await recordAttempt(
      record.id,
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW, dueAt: iso(330) },
      iso(90),
    );
    const stored = await getStatusRecord(record.id);
    expect(stored).toMatchObject({ status: 'delivered' });
    expect(stored).not.toHaveProperty('openKind');
    expect(stored).not.toHaveProperty('dueAt');
  });

  it('a transient failure without a due time keeps the one the claim set', async () => {
    const record = await claimed();
    await recordAttempt(
      record.id,
      { status: 'accepted', attempts: 0, error: 'not attempted: x', at: NOW },
      iso(90),
    );
    expect(await getStatusRecord(record.id)).toMatchObject({
      status: 'accepted',
      attempts: 0,
      openKind: 'caseRecord',
      dueAt: iso(390),
    });
  });

  it('counts from zero on a record that has no attempts yet', async () => {
    const { attempts: _a, ...withoutAttempts } = accepted();
    await seedStatusRecords([withoutAttempts as StatusRecord]);
    await claimRecord(withoutAttempts.id, { now: NOW, leaseUntil: iso(90), dueAt: iso(390) });
    await recordAttempt(
      withoutAttempts.id,
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW },
      iso(90),
    );
    expect(await getStatusRecord(withoutAttempts.id)).toMatchObject({ attempts: 1 });
  });

  it('changes nothing, and says so, when the lease is no longer this one', async () => {
    // Prepare: claimed; then the lease ran out and another worker claimed it.
    const record = await claimed();
    const later = new Date(NOW.getTime() + 91_000);
    await claimRecord(record.id, { now: later, leaseUntil: iso(181), dueAt: iso(481) });
    const before = await getStatusRecord(record.id);
    // Act
    const recorded = await recordAttempt(
      record.id,
      { status: 'delivered', attempts: 1, downstreamId: '1', at: NOW },
      iso(90),
    );
    // Assess
    expect(recorded).toBe(false);
    expect(await getStatusRecord(record.id)).toEqual(before);
  });

  it('changes nothing on a settled record, even with its last lease', async () => {
    const record = accepted({ status: 'failed', leaseUntil: iso(90), openKind: undefined, dueAt: undefined });
    await seedStatusRecords([record]);
    const recorded = await recordAttempt(record.id, { status: 'delivered', attempts: 1, at: NOW }, iso(90));
    expect(recorded).toBe(false);
    expect(await getStatusRecord(record.id)).toEqual(record);
  });
});

describe('reopenFailedRecord', () => {
  it('puts a failed record back to accepted, in the open index, due when given, keeping attempts and error', async () => {
    // Prepare: failed, with a lease left over from its last attempt.
    const record = accepted({
      status: 'failed',
      attempts: 5,
      error: 'HTTP 503',
      openKind: undefined,
      dueAt: undefined,
      leaseUntil: iso(-60),
    });
    await seedStatusRecords([record]);
    // Act
    const reopened = await reopenFailedRecord(record.id, { at: NOW, dueAt: iso(300) });
    // Assess
    expect(reopened).toBe(true);
    const { leaseUntil: _l, ...rest } = record;
    expect(await getStatusRecord(record.id)).toEqual({
      ...rest,
      status: 'accepted',
      updatedAt: NOW.toISOString(),
      openKind: 'caseRecord',
      dueAt: iso(300),
    });
  });

  it('leaves a record that is not failed', async () => {
    const record = accepted({ status: 'rejected', openKind: undefined, dueAt: undefined });
    await seedStatusRecords([record]);
    expect(await reopenFailedRecord(record.id, { at: NOW, dueAt: iso(300) })).toBe(false);
    expect(await getStatusRecord(record.id)).toEqual(record);
  });
});
