/**
 * What the hold learns from one batched call (lib/delivery/holdOutcomes.ts, notedOutcomesOf): one event per
 * outcome the downstream decided, one for a whole failed call, none for a record without an outcome.
 */
import { describe, expect, it } from 'vitest';
import { notedOutcomesOf } from '../../lib/delivery/holdOutcomes.ts';
import type { DeliveryOutcome } from '../../lib/downstream/types.ts';

describe('the outcomes a batched call notes in the hold', () => {
  it('notes a failure of the whole call once, each decided record once, and nothing else', () => {
    // Prepare: r1 and r2 share the failed call's outcome object; r3 was refused; r4 has no outcome.
    const callFailed: DeliveryOutcome = { kind: 'transient', error: 'HTTP 503', reachedDownstream: false };
    const refused: DeliveryOutcome = { kind: 'permanent', error: 'HTTP 400', reachedDownstream: true };
    const outcomes = new Map<string, DeliveryOutcome>([
      ['r1', callFailed],
      ['r2', callFailed],
      ['r3', refused],
    ]);
    // Act
    const noted = notedOutcomesOf(['r1', 'r2', 'r3', 'r4'], outcomes, { probe: true });
    // Assess
    expect(noted).toEqual([
      { recordId: 'r1', kind: 'transient', probe: true },
      { recordId: 'r3', kind: 'permanent', probe: true },
    ]);
  });

  it('notes nothing for records never sent because an earlier call of the delivery failed whole', () => {
    // Prepare: r1 and r2 were in the failed call, r3 and r4 in the call after it, which was not made.
    const callFailed: DeliveryOutcome = { kind: 'transient', error: 'HTTP 503', reachedDownstream: true };
    const notSent: DeliveryOutcome = {
      kind: 'transient',
      error: 'not sent: an earlier call of this delivery failed (HTTP 503)',
      reachedDownstream: false,
      notSent: true,
    };
    const outcomes = new Map<string, DeliveryOutcome>([
      ['r1', callFailed],
      ['r2', callFailed],
      ['r3', notSent],
      ['r4', notSent],
    ]);
    // Act
    const noted = notedOutcomesOf(['r1', 'r2', 'r3', 'r4'], outcomes, { probe: false });
    // Assess: one failure, the call that was made.
    expect(noted).toEqual([{ recordId: 'r1', kind: 'transient', probe: false }]);
  });
});
