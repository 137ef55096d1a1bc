/**
 * settleBounded (lib/concurrency/bounded.ts), through which the worker's claims, outcome writes and visibility changes
 * of a batch go: at most `limit` at once, every item settled in its place, one failure stopping nothing.
 */
import { describe, expect, it } from 'vitest';
import { settleBounded } from '../../lib/concurrency/bounded.ts';

/** Work that waits until released, counting how many run at once. */
const gatedWork = () => {
  const gates: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const work = async (item: number) => {
    running++;
    most = Math.max(most, running);
    await new Promise<void>((release) => gates.push(release));
    running--;
    if (item === 2) throw new Error('item 2 refused');
    return item * 10;
  };
  /** Releases the waiting items one at a time until every item has run. */
  const releaseAll = async (settled: Promise<unknown>) => {
    let done = false;
    void settled.finally(() => {
      done = true;
    });
    while (!done) {
      gates.shift()?.();
      await new Promise((next) => setImmediate(next));
    }
  };
  return { work, releaseAll, most: () => most };
};

describe('settleBounded', () => {
  it('runs at most `limit` items at once and settles each in its place, a failure among them', async () => {
    // Prepare
    const gated = gatedWork();
    // Act
    const settling = settleBounded([0, 1, 2, 3, 4, 5, 6], 3, gated.work);
    await gated.releaseAll(settling);
    const settled = await settling;
    // Assess
    expect(gated.most()).toBe(3);
    expect(settled).toEqual([
      { ok: true, value: 0 },
      { ok: true, value: 10 },
      { ok: false, error: new Error('item 2 refused') },
      { ok: true, value: 30 },
      { ok: true, value: 40 },
      { ok: true, value: 50 },
      { ok: true, value: 60 },
    ]);
  });

  it('runs every item at once when there are fewer than the limit, and settles none of none', async () => {
    // Prepare
    const gated = gatedWork();
    // Act
    const settling = settleBounded([0, 1], 16, gated.work);
    await gated.releaseAll(settling);
    const none = await settleBounded([], 16, gated.work);
    // Assess
    expect(gated.most()).toBe(2);
    expect(await settling).toEqual([
      { ok: true, value: 0 },
      { ok: true, value: 10 },
    ]);
    expect(none).toEqual([]);
  });
});
