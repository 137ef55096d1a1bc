import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerName, isTestCaller } from '../clients/types.ts';
import type { FormControlsContext } from '../forms/browserFormControls.ts';
import { callerOf } from '../http/callerIdentity.ts';
import { requestIdOf } from '../http/contractErrors.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { logger } from '../observability/logger.ts';
import { countRecords } from '../observability/metrics.ts';
import { validateCaseRecord } from '../validation/caseRecord.ts';
import { formatProblem } from '../validation/format.ts';
import { acceptRecords } from './acceptRecords.ts';
import { intakeAnswerBy, intakeDeadline } from './deadline.ts';
import { idempotencyKeyOf } from './idempotencyKey.ts';

const accepted = (crmId: string) => jsonResponse(200, { CrmId: crmId, CrmResponseSuccess: true });

/**
 * `POST /crm/case` after parsing (JSON or form): validates the case, accepts it and answers with its CrmId,
 * the key under which the worker creates the case in the CRM. A browser form that filled the honeypot field
 * (a bot) gets the same answers, a made-up CrmId included, but nothing is stored or queued.
 *
 * @example
 * const response = await caseRequest({ ...event, body: { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' } }, context);
 * // 200 {"CrmId":"…","CrmResponseSuccess":true}
 */
export const caseRequest = async (
  event: APIGatewayProxyEvent,
  context: FormControlsContext,
): Promise<APIGatewayProxyResult> => {
  const requestId = requestIdOf({ event, context });
  const idempotencyKey = idempotencyKeyOf(event);
  const result = validateCaseRecord(event.body as unknown);
  if (!result.ok) throw new RequestRefusedError(400, result.problems.map(formatProblem).join('; '));
  if (context.formControls?.honeypot) {
    logger.info('browser form post discarded: honeypot field filled', { requestId });
    return accepted(randomBytes(16).toString('hex'));
  }
  const [crmId] = await acceptRecords({
    kind: 'caseRecord',
    records: [result.value],
    requestId,
    owner: callerName(callerOf(context)),
    test: isTestCaller(callerOf(context)),
    idempotencyKey,
    abortSignal: intakeDeadline(context),
    answerBy: intakeAnswerBy(context),
  });
  logger.info('case accepted', { requestId, count: 1 });
  countRecords('accepted', 'crm', 1, isTestCaller(callerOf(context)) ? 'test' : 'live');
  return accepted(crmId);
};
