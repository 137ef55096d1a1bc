/**
 * inParallel (lib/concurrency): a large request's conditional writes, the purge's updates, at most `limit` in
 * flight, results in request order.
 */
import { describe, expect, it } from 'vitest';
import { inParallel } from '../../lib/concurrency/bounded.ts';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Work that records how many calls run at once and every call it got. */
const watchedWork = () => {
  let running = 0;
  let mostAtOnce = 0;
  const calls: [string, number][] = [];
  const work = async (item: string, index: number) => {
    calls.push([item, index]);
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    // Later items finish first: results must still come back in order.
    await tick(2 * (10 - (index % 10)));
    running--;
    return `${item}!`;
  };
  return { work, calls, mostAtOnce: () => mostAtOnce };
};

describe('inParallel', () => {
  it('keeps the order of the items whatever order the calls finish in, and calls each item once with its index', async () => {
    const items = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const watched = watchedWork();
    const results = await inParallel(items, 4, watched.work);
    expect(results).toEqual(items.map((item) => `${item}!`));
    expect(watched.calls).toEqual(items.map((item, i) => [item, i]));
  });

  it('runs at most `limit` calls at once, and that many when there is enough work', async () => {
    const watched = watchedWork();
    await inParallel(
      Array.from({ length: 20 }, (_, i) => `r${i}`),
      3,
      watched.work,
    );
    expect(watched.mostAtOnce()).toBe(3);
  });

  it('with fewer items than the limit, calls each once', async () => {
    const watched = watchedWork();
    const results = await inParallel(['a', 'b'], 16, watched.work);
    expect(results).toEqual(['a!', 'b!']);
    expect(watched.calls).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
  });

  it('calls nothing for no items', async () => {
    const watched = watchedWork();
    expect(await inParallel([], 16, watched.work)).toEqual([]);
    expect(watched.calls).toEqual([]);
  });

  it('fails with the first failure', async () => {
    const outcome = inParallel(['a', 'b', 'c'], 2, async (item) => {
      if (item === 'b') throw new Error('b failed');
      return item;
    });
    await expect(outcome).rejects.toThrow('b failed');
  });
});
