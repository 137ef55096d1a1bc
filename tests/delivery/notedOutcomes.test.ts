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
});
