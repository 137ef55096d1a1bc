/**
 * The soak's feed check (soak/feed.ts) on feeds as GET /events lists them: a record's final state is the
 * entry of its highest sequence, whatever the order; a missing one and another client's entry are problems.
 */
import { describe, expect, it } from 'vitest';
import { checkFeed, type FeedEntry, feedKept } from '../../soak/feed.ts';

const entry = (recordId: string, state: string, sequence: number): FeedEntry => ({
  id: `${recordId}:${sequence}`,
  data: { recordId, state, sequence },
});

const settled = new Map([
  ['a1', { owner: 'example-dealer', state: 'delivered' }],
  ['b2', { owner: 'example-web-forms', state: 'failed' }],
]);
const owners = new Map([
  ['a1', 'example-dealer'],
  ['b2', 'example-web-forms'],
]);

describe('the soak feed check', () => {
  it('takes the highest sequence per record as its state, whatever the order and copies', () => {
    // Prepare: a1 failed, was redriven and delivered (read out of order, with a copy); b2 failed.
    const feeds = new Map([
      [
        'example-dealer',
        [
          entry('a1', 'delivered', 3),
          entry('a1', 'failed', 1),
          entry('a1', 'delivered', 3),
          entry('a1', 'accepted', 2),
        ],
      ],
      ['example-web-forms', [entry('b2', 'failed', 1)]],
    ]);
    // Act
    const check = checkFeed({ settled, owners, feeds });
    // Assess
    expect(check.counts).toEqual({ feedExpected: 2, feedMismatched: 0, feedForeign: 0, feedEntries: 5 });
    expect(feedKept(check.counts)).toBe(true);
  });

  it('counts a record whose latest entry is not its final state, one missing, and an entry of another client', () => {
    // Prepare: a1's delivery is missing (only its failure and redrive); b2 is listed in the dealer's feed only.
    const feeds = new Map([
      ['example-dealer', [entry('a1', 'failed', 1), entry('a1', 'accepted', 2), entry('b2', 'failed', 1)]],
      ['example-web-forms', []],
    ]);
    // Act
    const check = checkFeed({ settled, owners, feeds });
    // Assess
    expect(check.counts).toEqual({ feedExpected: 2, feedMismatched: 2, feedForeign: 1, feedEntries: 3 });
    expect([...check.mismatched].sort()).toEqual(['a1', 'b2']);
    expect(feedKept(check.counts)).toBe(false);
  });
});
