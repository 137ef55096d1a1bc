/**
 * How the soak sees hold openings (soak/holdWatch.ts): the worker's "downstream held" log line, as Powertools
 * writes it, and the hold items' `heldSince`; one opening seen both ways counts once; other lines count nothing.
 */
import { describe, expect, it } from 'vitest';
import { createHoldWatch, holdOpeningOfLine } from '../../soak/holdWatch.ts';

const heldLine = (downstream: string, heldSince: string, reason = 'outage') =>
  JSON.stringify({
    level: 'WARN',
    message: 'downstream held: records wait without spending tries',
    timestamp: heldSince,
    service: 'dealer-gateway',
    downstream,
    reason,
    heldSince,
  });

describe('the soak hold watch', () => {
  it('reads an opening from the worker log line, also behind a prefix', () => {
    // Act
    const plain = holdOpeningOfLine(heldLine('crm', '2026-11-28T07:00:00.000Z'));
    const prefixed = holdOpeningOfLine(`[worker] ${heldLine('erp', '2026-11-28T07:00:01.000Z')}`);
    // Assess
    expect(plain).toEqual({
      downstream: 'crm',
      reason: 'outage',
      heldSince: '2026-11-28T07:00:00.000Z',
      seenIn: 'log',
    });
    expect(prefixed?.downstream).toBe('erp');
  });

  it('ignores other lines: the closing, the held lines of a hold already open, broken JSON, an unknown downstream', () => {
    // Act / Assess
    expect(
      holdOpeningOfLine(
        JSON.stringify({
          message: 'downstream held: try given back, message waits',
          downstream: 'erp',
          heldSince: '2026-11-28T07:00:00Z',
        }),
      ),
    ).toBeUndefined();
    expect(
      holdOpeningOfLine(
        JSON.stringify({
          message: 'downstream hold closed',
          downstream: 'erp',
          heldSince: '2026-11-28T07:00:00Z',
        }),
      ),
    ).toBeUndefined();
    expect(holdOpeningOfLine('{"message":"webhook delivered"}')).toBeUndefined();
    expect(
      holdOpeningOfLine('downstream held: records wait without spending tries {not json'),
    ).toBeUndefined();
    expect(holdOpeningOfLine(heldLine('bus', '2026-11-28T07:00:00.000Z'))).toBeUndefined();
  });

  it('counts an opening seen in the log and in the store once, and each new heldSince apart', () => {
    // Prepare
    const watch = createHoldWatch();
    // Act
    watch.noteLine(heldLine('crm', '2026-11-28T07:00:00.000Z'));
    watch.noteItem({
      downstream: 'crm',
      held: true,
      reason: 'outage',
      heldSince: '2026-11-28T07:00:00.000Z',
    });
    // Closed since: the item keeps its last opening's heldSince (without a reason).
    watch.noteItem({ downstream: 'crm', held: false, heldSince: '2026-11-28T07:00:00.000Z' });
    watch.noteItem({ downstream: 'erp', held: false, heldSince: '2026-11-28T06:59:00.000Z' });
    watch.noteItem({ downstream: 'erp', held: false });
    // Assess
    expect(watch.openings()).toEqual([
      { downstream: 'erp', reason: 'outage', heldSince: '2026-11-28T06:59:00.000Z', seenIn: 'store' },
      { downstream: 'crm', reason: 'outage', heldSince: '2026-11-28T07:00:00.000Z', seenIn: 'log' },
    ]);
  });

  it('reads what the opening call was from the worker line: the records it carried and the parts answered', () => {
    // Prepare
    const line = JSON.stringify({
      level: 'WARN',
      message: 'downstream held: records wait without spending tries',
      downstream: 'crm',
      reason: 'outage',
      heldSince: '2026-11-28T07:33:34.686Z',
      callRecords: 8,
      answeredParts: 0,
    });
    // Act
    const opening = holdOpeningOfLine(line);
    // Assess
    expect(opening).toMatchObject({ downstream: 'crm', call: { carried: 8, answered: 0 } });
  });
});
