import type { APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { keptFields } from '../privacy/fieldClassification.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { getCustomerFields } from '../store/statusRecords.ts';
import { audit } from './audit.ts';
import type { ConsolePerson } from './types.ts';

const plausibleId = new RegExp(RECORD_ID_PATTERN);

/**
 * `GET /console/api/records/{id}/customer`: the record's personal fields (those the one classification does not keep,
 * lib/privacy/fieldClassification.ts), while it still holds them; 404 once purged. The audit entry is written
 * before anything is shown: a view that could not be audited shows nothing.
 *
 * @example
 * await customerAnswer('3f0c…', person) // 200 {"customer":{"firstName":"Alex","email":"alex@example.com",…}}
 */
export const customerAnswer = async (id: string, person: ConsolePerson): Promise<APIGatewayProxyResult> => {
  const found = plausibleId.test(id) ? await getCustomerFields(id) : undefined;
  if (!found) throw new RequestRefusedError(404, "no record with this id holds a customer's fields");
  await audit(person, 'view-customer', { records: [id] });
  const kept = new Set(keptFields(found.kind));
  const customer = Object.fromEntries(
    Object.entries(found.record).filter(([field, value]) => !kept.has(field) && value !== undefined),
  );
  return jsonResponse(200, { customer });
};
