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

/** Every order of `entries` (the copies included, so equal orders come more than once). */
const permutations = (entries: FeedEntry[]): FeedEntry[][] =>
  entries.length <= 1
    ? [entries]
    : entries.flatMap((first, i) =>
        permutations([...entries.slice(0, i), ...entries.slice(i + 1)]).map((rest) => [first, ...rest]),
      );

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
    // Prepare: a1 failed, was redriven and delivered (with a copy of the delivery); b2 failed. The feed is read in
    // every order of a1's entries, so a check that kept the first entry, or the last, fails in some of them.
    const a1 = [
      entry('a1', 'failed', 1),
      entry('a1', 'accepted', 2),
      entry('a1', 'delivered', 3),
      entry('a1', 'delivered', 3),
    ];
    const orders = permutations(a1);
    // Act
    const checks = orders.map((order) =>
      checkFeed({
        settled,
        owners,
        feeds: new Map([
          ['example-dealer', order],
          ['example-web-forms', [entry('b2', 'failed', 1)]],
        ]),
      }),
    );
    // Assess: orders with the highest first, in the middle and last are all among them.
    expect(orders.map((order) => order.findIndex((e) => e.data.sequence === 3))).toEqual(
      expect.arrayContaining([0, 1, 2]),
    );
    expect(orders.some((order) => order.at(-1)?.data.sequence !== 3)).toBe(true);
    for (const check of checks) {
      expect(check.counts).toEqual({ feedExpected: 2, feedMismatched: 0, feedForeign: 0, feedEntries: 5 });
      expect(feedKept(check.counts)).toBe(true);
    }
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
