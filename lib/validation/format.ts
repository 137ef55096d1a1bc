import type { Problem } from './types.ts';

/**
 * One problem as a sentence: `[1].email is not a valid email address`, `email is not valid`,
 * `body must be a JSON array of sales registration records`.
 */
export const formatProblem = (problem: Problem): string => {
  const index = problem.index === undefined ? '' : `[${problem.index}]`;
  const subject =
    problem.field === undefined ? index || 'body' : `${index}${index ? '.' : ''}${problem.field}`;
  return `${subject} ${problem.rule}`;
};

/** Orders problems by record index (stable within a record) so that a person reads them record by record. */
export const sortProblems = (problems: Problem[]): Problem[] =>
  problems
    .map((problem, order) => ({ problem, order }))
    .sort((a, b) => (a.problem.index ?? -1) - (b.problem.index ?? -1) || a.order - b.order)
    .map(({ problem }) => problem);

/** Longest field or key name an answer repeats: a longer one is cut, so that a 100 KB key is not echoed back. */
export const MAX_ECHOED_NAME_LENGTH = 64;

const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/**
 * A name sent by the caller (an unknown property, a duplicate key) as an answer may repeat it: at most
 * {@link MAX_ECHOED_NAME_LENGTH} characters (then `…`), control characters shown as `?`.
 *
 * @example
 * nameForMessage('x'.repeat(100_000)) // the first 64 x, then '…'
 * nameForMessage('a\u0000b')          // 'a?b'
 */
export const nameForMessage = (name: string): string => {
  let cut = name.length > MAX_ECHOED_NAME_LENGTH ? name.slice(0, MAX_ECHOED_NAME_LENGTH) : name;
  // Never end on half a surrogate pair.
  const last = cut.charCodeAt(cut.length - 1);
  if (cut !== name && last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  let printable = '';
  for (let i = 0; i < cut.length; i++) printable += isControl(cut.charCodeAt(i)) ? '?' : cut[i];
  return cut === name ? printable : `${printable}…`;
};
