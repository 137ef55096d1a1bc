/**
 * The time `seconds` after `from`, as the ISO text the `open` index sorts by.
 *
 * @example
 * dueAfter(new Date('2026-11-22T10:00:00Z'), 300) // '2026-11-22T10:05:00.000Z'
 */
export const dueAfter = (from: Date, seconds: number): string =>
  new Date(from.getTime() + seconds * 1000).toISOString();
