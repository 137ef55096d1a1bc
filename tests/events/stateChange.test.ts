/**
 * The outbox entry and the event of a change of state hold exactly the fields that apply: no downstream id on a
 * refusal, no error on a delivery, no key left standing with nothing in it.
 */
import { describe, expect, it } from 'vitest';
import { eventOf } from '../../lib/events/stateChange.ts';
import { pendingChangeOf } from '../../lib/records/stateChange.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';

const at = new Date('2026-11-22T08:03:12.345Z');

describe('pendingChangeOf', () => {
  it('a refusal: its error, and no downstreamId key', () => {
    // Act
    const pending = pendingChangeOf(
      { status: 'accepted' },
      { state: 'rejected', attempts: 1, sequence: 1, at, error: 'refused' },
    );
    // Assess
    expect(pending).toStrictEqual({
      state: 'rejected',
      previousState: 'accepted',
      attempts: 1,
      sequence: 1,
      at: at.toISOString(),
      error: 'refused',
    });
  });

  it('a delivery: its downstream id, and no error key', () => {
    // Act
    const pending = pendingChangeOf(
      { status: 'accepted' },
      { state: 'delivered', attempts: 2, sequence: 2, at, downstreamId: '500Ab', error: undefined },
    );
    // Assess
    expect(pending).toStrictEqual({
      state: 'delivered',
      previousState: 'accepted',
      attempts: 2,
      sequence: 2,
      at: at.toISOString(),
      downstreamId: '500Ab',
    });
  });
});

describe('eventOf', () => {
  it('a redriven case: neither downstreamId nor error key', () => {
    // Prepare
    const record = acceptedCase({ status: 'failed', attempts: 3 });
    // Act
    const event = eventOf(record, {
      state: 'accepted',
      previousState: 'failed',
      attempts: 3,
      sequence: 2,
      at: at.toISOString(),
    });
    // Assess
    expect(event).toStrictEqual({
      eventId: `${record.id}:${at.toISOString()}`,
      recordId: record.id,
      kind: 'caseRecord',
      client: 'example-web-forms',
      state: 'accepted',
      previousState: 'failed',
      attempts: 3,
      sequence: 2,
      at: at.toISOString(),
      acceptedAt: record.acceptedAt,
    });
  });
});
