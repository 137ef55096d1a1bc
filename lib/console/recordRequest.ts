import type { APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { lastEventIdOf } from '../records/stateChange.ts';
import { statusView } from '../status/statusView.ts';
import { getRecordState, type RecordState } from '../store/statusRecords.ts';
import { timelineOf } from './timeline.ts';

const plausibleId = new RegExp(RECORD_ID_PATTERN);

/**
 * A record by id, read without its personal fields; a 404 for an unknown id (and, without a read, for a malformed
 * one: it cannot exist).
 *
 * @throws RequestRefusedError 404
 */
export const recordStateOr404 = async (id: string): Promise<RecordState> => {
  const status = plausibleId.test(id) ? await getRecordState(id) : undefined;
  if (!status) throw new RequestRefusedError(404, 'no record with this id');
  return status;
};

/**
 * `GET /console/api/records/{id}`: where any client's record stands, as the status look-up reads it, with the
 * console's fields (the contract's row, `downstream`, `hasCustomer`, `lastWebhookId`) and its `timeline`, oldest
 * first, built from its story and what the record holds (lib/console/timeline.ts). Never its personal fields: the
 * "Customer" section is `GET records/{id}/customer`, audited.
 *
 * @example
 * await recordAnswer('3f0c…') // 200 {"id":"3f0c…","kind":"crmCase","client":"example-web-forms","state":"failed",…,"timeline":[…]}
 */
export const recordAnswer = async (id: string): Promise<APIGatewayProxyResult> => {
  const status = await recordStateOr404(id);
  const lastWebhookId = lastEventIdOf(status);
  const hash = status.frameKey?.indexOf('#') ?? -1;
  return jsonResponse(200, {
    ...statusView(status),
    kind: status.kind === 'caseRecord' ? 'crmCase' : 'salesRegistration',
    client: status.owner,
    frameNumber: status.frameKey && hash >= 0 ? status.frameKey.slice(hash + 1) : null,
    state: status.status,
    test: status.test === true,
    downstream: status.kind === 'caseRecord' ? 'crm' : 'erp',
    hasCustomer: status.personalDataRemovedAt === undefined,
    ...(lastWebhookId ? { lastWebhookId } : {}),
    timeline: timelineOf(status),
  });
};
