/** One item's result: its value, or what it threw (the others go on). */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `work` over `items` with at most `limit` running at once, in order of start, and settles each: one
 * item's failure neither stops nor fails the others. The worker's claims, outcome writes and visibility changes
 * for a batch of up to 200 messages go through it, so one invocation never opens hundreds of connections.
 *
 * @example
 * const settled = await settleBounded(messages, 10, (message) => claim(message));
 * settled[0]; // { ok: true, value: … } or { ok: false, error }
 */
export const settleBounded = async <I, T>(
  items: readonly I[],
  limit: number,
  work: (item: I, index: number) => Promise<T>,
): Promise<Settled<T>[]> => {
  const results: Settled<T>[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { ok: true, value: await work(items[index], index) };
      } catch (error) {
        results[index] = { ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
};

/**
 * {@link settleBounded}, all or nothing: the results in order, or the first failure (in the items' order) once every
 * call has finished. A large request's conditional writes and the purge's updates go through it.
 *
 * @example
 * const created = await inParallel(records, 16, (record) => putStatusRecordIfAbsent(record));
 */
export const inParallel = async <I, T>(
  items: readonly I[],
  limit: number,
  work: (item: I, index: number) => Promise<T>,
): Promise<T[]> => {
  const settled = await settleBounded(items, limit, work);
  const failed = settled.find((result) => !result.ok);
  if (failed && !failed.ok) throw failed.error;
  return settled.map((result) => (result as { ok: true; value: T }).value);
};
