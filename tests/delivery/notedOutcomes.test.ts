/**
 * What the hold learns from one call (lib/delivery/holdOutcomes.ts, notedOutcomesOf): a call with any part answered
 * notes only its answered parts (the downstream is up); a call with none notes one failure per record it carried;
 * the order of the parts never matters; a record without an outcome notes nothing.
 */
import { describe, expect, it } from 'vitest';
import { notedOutcomesOf } from '../../lib/delivery/holdOutcomes.ts';
import type { DeliveryOutcome } from '../../lib/downstream/types.ts';

const locked: DeliveryOutcome = { kind: 'transient', error: 'UNABLE_TO_LOCK_ROW', reachedDownstream: true };
const upserted: DeliveryOutcome = { kind: 'delivered', downstreamId: '500x', reachedDownstream: true };
const refused: DeliveryOutcome = { kind: 'permanent', error: 'HTTP 400', reachedDownstream: true };

describe('the outcomes a call notes in the hold', () => {
  it('a call with parts answered notes only those, whatever the order of the parts', () => {
    // Prepare: 3 upserted and 5 locked, in both orders.
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];
    const successesFirst = new Map(ids.map((id, i) => [id, i < 3 ? upserted : locked]));
    const failuresFirst = new Map(ids.map((id, i) => [id, i < 5 ? locked : upserted]));
    // Act
    const first = notedOutcomesOf(ids, successesFirst, { probe: false });
    const last = notedOutcomesOf(ids, failuresFirst, { probe: false });
    // Assess
    expect(first.map((event) => event.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(last.map((event) => event.kind)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('a refusal for content is an answer too', () => {
    // Prepare
    const outcomes = new Map<string, DeliveryOutcome>([
      ['r1', locked],
      ['r2', refused],
    ]);
    // Act
    const noted = notedOutcomesOf(['r1', 'r2', 'r3'], outcomes, { probe: true });
    // Assess: r3 has no outcome and notes nothing.
    expect(noted).toEqual([{ recordId: 'r2', kind: 'permanent', probe: true }]);
  });

  it('a call that failed whole is one failure per record it carried, with its API usage', () => {
    // Prepare: one outcome for the whole call, as the adapter gives it.
    const down: DeliveryOutcome = {
      kind: 'transient',
      error: 'HTTP 503',
      reachedDownstream: true,
      wholeCall: true,
    };
    const outcomes = new Map<string, DeliveryOutcome>([
      ['r1', down],
      ['r2', down],
    ]);
    // Act
    const noted = notedOutcomesOf(['r1', 'r2'], outcomes, {
      probe: false,
      apiUsage: { used: 1, allowed: 10 },
    });
    // Assess
    expect(noted).toEqual([
      { recordId: 'r1', kind: 'transient', probe: false, apiUsage: { used: 1, allowed: 10 } },
      { recordId: 'r2', kind: 'transient', probe: false, apiUsage: { used: 1, allowed: 10 } },
    ]);
  });
});
