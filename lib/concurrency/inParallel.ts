/**
 * Maps `items` through `work` with at most `limit` calls in flight, keeping the order. The first failure fails the
 * whole (the calls already started finish on their own).
 *
 * @example
 * const created = await inParallel(records, 16, (record) => putStatusRecordIfAbsent(record));
 */
export const inParallel = async <T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
};
