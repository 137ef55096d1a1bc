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
