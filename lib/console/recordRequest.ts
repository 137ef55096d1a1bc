import type { APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { statusView } from '../status/statusView.ts';
import { getRecordState } from '../store/statusRecords.ts';

const plausibleId = new RegExp(RECORD_ID_PATTERN);

/**
 * `GET /console/api/records/{id}`: where any client's record stands, as the status look-up reads it (without its
 * personal fields: the "Customer" section is a later, audited view), with its kind and client.
 *
 * @example
 * await recordAnswer('3f0c…') // 200 {"id":"3f0c…","kind":"caseRecord","client":"example-web-forms","status":"failed",…}
 */
export const recordAnswer = async (id: string): Promise<APIGatewayProxyResult> => {
  // A malformed id cannot exist: 404 without a read.
  const status = plausibleId.test(id) ? await getRecordState(id) : undefined;
  if (!status) throw new RequestRefusedError(404, 'no record with this id');
  return jsonResponse(200, { kind: status.kind, client: status.owner, ...statusView(status) });
};
