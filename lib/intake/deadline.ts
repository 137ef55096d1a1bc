import type { Context } from 'aws-lambda';
import { ANSWER_RESERVE_MS } from './constants.ts';

/** Without a Lambda context (a direct call), the function timeout of the intake functions. */
export const DEFAULT_REMAINING_MS = 10_000;
/** Never less than this for the AWS calls, even when the invocation is nearly out of time. */
const MIN_BUDGET_MS = 500;

/**
 * The deadline of an intake request's AWS calls: the invocation's remaining time less what answering 503 needs,
 * so that the caller always gets an answer in the contract's shape, never the gateway's timeout.
 *
 * @example
 * await acceptRecords({ ...request, abortSignal: intakeDeadline(context) });
 */
export const intakeDeadline = (
  context: Pick<Context, 'getRemainingTimeInMillis'> | undefined,
): AbortSignal => {
  const remaining = context?.getRemainingTimeInMillis?.() ?? DEFAULT_REMAINING_MS;
  return AbortSignal.timeout(Math.max(MIN_BUDGET_MS, remaining - ANSWER_RESERVE_MS));
};

/**
 * When the invocation answering an intake request ends at the latest (its Lambda timeout): past it, the request has
 * answered or died, so a record it stored that nobody has moved since was never queued, or waits unreceived (see
 * lib/intake/unqueued.ts).
 *
 * @example
 * await acceptRecords({ ...request, answerBy: intakeAnswerBy(context) });
 */
export const intakeAnswerBy = (
  context: Pick<Context, 'getRemainingTimeInMillis'> | undefined,
  now = new Date(),
): Date => new Date(now.getTime() + (context?.getRemainingTimeInMillis?.() ?? DEFAULT_REMAINING_MS));
