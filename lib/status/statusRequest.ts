import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerName } from '../clients/types.ts';
import { type CallerContext, callerOf } from '../http/callerIdentity.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { getRecordState } from '../store/statusRecords.ts';
import { heldSinceOf } from './heldSince.ts';
import { statusView } from './statusView.ts';

const plausibleId = new RegExp(RECORD_ID_PATTERN);

/**
 * `GET /erp/sales_registration/{id}` and `GET /crm/case/{CrmId}`: where one of the caller's records stands, or 404;
 * while it is `accepted` and its downstream held, since when (one more read: lib/status/heldSince.ts).
 *
 * @example
 * await statusRequest({ ...event, pathParameters: { CrmId: '3f0c…' } }) // 200 {"id":"3f0c…","status":"delivered",…}
 */
export const statusRequest = async (
  event: APIGatewayProxyEvent,
  context: CallerContext,
): Promise<APIGatewayProxyResult> => {
  const crmId = event.pathParameters?.CrmId;
  const kind = crmId === undefined ? 'salesRegistration' : 'caseRecord';
  const id = crmId ?? event.pathParameters?.id ?? '';
  const label = kind === 'caseRecord' ? 'case with this CrmId' : 'sales registration with this id';
  // A malformed id cannot exist: answer 404 without a read.
  const status = plausibleId.test(id) ? await getRecordState(id) : undefined;
  // Another caller's record is answered like an unknown one: its existence is not revealed.
  if (!status || status.kind !== kind || status.owner !== callerName(callerOf(context))) {
    throw new RequestRefusedError(404, `no ${label}`);
  }
  return jsonResponse(200, statusView(status, await heldSinceOf(kind, [status])));
};
