/**
 * The client's view of a change (lib/events/webhookEvent.ts): the contract's Standard Webhooks payload shape, only
 * the fields it names, never the owner or the acceptance time, optional fields only when they apply.
 */
import { describe, expect, it } from 'vitest';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import { webhookEventOf, webhookIdOf } from '../../lib/events/webhookEvent.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';

const at = new Date('2026-11-22T08:03:12.345Z');

describe('webhookEventOf', () => {
  it('a sale rejected by SAP: type, timestamp, data with the sequence, the error, frame and dealer', () => {
    // Prepare
    const sale = acceptedCase({
      kind: 'salesRegistration',
      owner: 'example-dealer',
      eventSequence: 2,
      record: { FrameNum: 'ZDM1ZBJ0012345', DealerId: 1234 } as unknown as StatusRecord['record'],
    });
    const event = stateChangeOf(sale, {
      state: 'rejected',
      attempts: 1,
      at,
      error: 'Frame number already registered',
    });
    // Act
    const body = webhookEventOf(event);
    // Assess
    expect(body).toStrictEqual({
      type: 'record.rejected',
      timestamp: at.toISOString(),
      data: {
        recordId: sale.id,
        kind: 'salesRegistration',
        state: 'rejected',
        previousState: 'accepted',
        attempts: 1,
        sequence: 3,
        error: 'Frame number already registered',
        FrameNum: 'ZDM1ZBJ0012345',
        DealerId: 1234,
      },
    });
    expect(webhookIdOf(event)).toBe(`${sale.id}:${at.toISOString()}`);
  });

  it('a delivered case: its downstream id, no error, no sale fields, no owner', () => {
    // Prepare
    const event = stateChangeOf(acceptedCase(), {
      state: 'delivered',
      attempts: 1,
      at,
      downstreamId: '500Xx01',
    });
    // Act
    const body = webhookEventOf(event);
    // Assess
    expect(body.type).toBe('record.delivered');
    expect(Object.keys(body.data).sort()).toEqual(
      ['attempts', 'downstreamId', 'kind', 'previousState', 'recordId', 'sequence', 'state'].sort(),
    );
    expect(JSON.stringify(body)).not.toContain(event.client);
  });
});
