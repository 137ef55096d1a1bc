import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerName, isTestCaller } from '../clients/types.ts';
import { type CallerContext, callerOf } from '../http/callerIdentity.ts';
import { requestIdOf } from '../http/contractErrors.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { logger } from '../observability/logger.ts';
import { countRecords } from '../observability/metrics.ts';
import { formatProblem } from '../validation/format.ts';
import { validateSalesRegistrations } from '../validation/salesRegistration.ts';
import { acceptRecords } from './acceptRecords.ts';
import { intakeAnswerBy, intakeDeadline } from './deadline.ts';
import { idempotencyKeyOf } from './idempotencyKey.ts';

/** Most problems listed in one answer; a 500-record upload with one systematic mistake would list 500. */
const MAX_PROBLEMS_LISTED = 50;

/** Joins problems into one message, saying how many more there are beyond the listed ones. */
export const problemsMessage = (problems: string[]): string =>
  problems.length <= MAX_PROBLEMS_LISTED
    ? problems.join('; ')
    : `${problems.slice(0, MAX_PROBLEMS_LISTED).join('; ')}; and ${problems.length - MAX_PROBLEMS_LISTED} more problem(s)`;

/**
 * `POST /erp/sales_registration` after parsing: validates every record, checks that the client may register sales
 * for each record's dealer, accepts the request whole or not at all, and answers with the ids in request order.
 *
 * @example
 * const response = await salesRegistrationRequest({ ...event, body: [record] }, context);
 * // 200 {"success":true,"message":"1 sales registration(s) accepted","registrations":[{"id":"…","FrameNum":"…"}]}
 */
export const salesRegistrationRequest = async (
  event: APIGatewayProxyEvent,
  context: CallerContext,
): Promise<APIGatewayProxyResult> => {
  const requestId = requestIdOf({ event, context });
  const idempotencyKey = idempotencyKeyOf(event);
  const result = validateSalesRegistrations(event.body as unknown);
  if (!result.ok) throw new RequestRefusedError(400, problemsMessage(result.problems.map(formatProblem)));
  const records = result.value;
  const caller = callerOf(context);
  const foreign =
    caller.kind === 'client'
      ? records.flatMap((r, i) => (caller.client.dealers.includes(r.DealerId) ? [] : [i]))
      : [];
  if (caller.kind !== 'client' || foreign.length > 0) {
    // The dealer number is not echoed: an answer names the field and the rule, never the value.
    const problems = foreign.map((i) => `[${i}].DealerId is not a dealer this client may register sales for`);
    throw new RequestRefusedError(
      403,
      problemsMessage(problems.length > 0 ? problems : ['this caller may not register sales']),
    );
  }
  const ids = await acceptRecords({
    kind: 'salesRegistration',
    records,
    requestId,
    owner: callerName(caller),
    test: isTestCaller(caller),
    idempotencyKey,
    abortSignal: intakeDeadline(context),
    answerBy: intakeAnswerBy(context),
  });
  logger.info('sales registrations accepted', { requestId, count: ids.length });
  countRecords('accepted', 'erp', ids.length, isTestCaller(caller) ? 'test' : 'live');
  return jsonResponse(200, {
    success: true,
    message: `${ids.length} sales registration(s) accepted`,
    registrations: ids.map((id, i) => ({ id, FrameNum: records[i].FrameNum })),
  });
};
