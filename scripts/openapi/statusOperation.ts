/**
 * The two GET operations, `getSalesRegistrationStatus` and `getCaseStatus`: where an accepted record stands,
 * with an example of each status. Their description is `operations/getStatus.md`.
 */
import { statusShape } from '../../lib/http/shapes.ts';
import { ref } from './components.ts';
import { bodyOf, caseId, EXAMPLE_REFERENCE, example, jsonCase, privateSale, salesIds } from './examples.ts';
import { markdown } from './markdown.ts';
import { jsonContent, response } from './responses.ts';
import type { JsonObject } from './schemaConversion.ts';

/**
 * GET /erp/sales_registration/{id} (`salesRegistration`) or GET /crm/case/{CrmId} (`caseRecord`): every answer
 * of the contract but 403 (`withRefusal` adds it).
 *
 * @example
 * withRefusal(statusOperation('caseRecord'), 'NotFound', statusShape)
 */
export const statusOperation = (kind: 'salesRegistration' | 'caseRecord'): JsonObject => {
  const sales = kind === 'salesRegistration';
  const id = sales ? salesIds([privateSale])[0] : caseId(jsonCase);
  const downstreamId = sales ? '0090012345' : '500Ex00000AbCdEFGH';
  const at = (time: string) => `2026-10-14T${time}Z`;
  const status = (fields: JsonObject) => ({ id, acceptedAt: at('09:30:12.345'), ...fields });
  const rejected = sales
    ? 'Dealer 1234 is not authorised for this model'
    : 'Required fields are missing: [Subject]';
  return {
    tags: ['Status'],
    operationId: sales ? 'getSalesRegistrationStatus' : 'getCaseStatus',
    summary: sales ? 'Where a sales registration stands' : 'Where a case stands',
    description: markdown('operations/getStatus.md', { record: sales ? 'sales registration' : 'case' }),
    parameters: [
      {
        name: sales ? 'id' : 'CrmId',
        in: 'path',
        required: true,
        description: sales
          ? 'An id from the registrations of a POST /erp/sales_registration answer.'
          : 'The CrmId of a POST /crm/case answer.',
        schema: ref('RecordId'),
        example: id,
      },
    ],
    responses: {
      '200': response(
        'The record’s status.',
        jsonContent(ref('RecordStatus'), {
          accepted: example(
            'Queued, not delivered yet',
            status({ status: 'accepted', attempts: 0, updatedAt: at('09:30:12.345') }),
          ),
          retrying: example(
            'Being retried after a transient failure',
            status({ status: 'accepted', attempts: 1, updatedAt: at('09:30:14.020'), error: 'HTTP 503' }),
          ),
          delivered: example(
            'Delivered',
            status({ status: 'delivered', attempts: 1, updatedAt: at('09:30:14.020'), downstreamId }),
          ),
          rejected: example(
            'Refused downstream',
            status({ status: 'rejected', attempts: 1, updatedAt: at('09:30:14.020'), error: rejected }),
          ),
          failed: example(
            'Attempts exhausted',
            status({
              status: 'failed',
              attempts: 5,
              updatedAt: at('10:05:41.877'),
              error: 'timed out after 10000 ms',
            }),
          ),
        }),
      ),
      '404': response(
        'No record with this id.',
        jsonContent(ref('NotFound'), {
          notFound: example(
            'Unknown id',
            bodyOf(
              statusShape.refused(
                404,
                sales ? 'no sales registration with this id' : 'no case with this CrmId',
              ),
            ),
          ),
        }),
      ),
      '500': response(
        'Unexpected error; quote the reference to the web services team.',
        jsonContent(ref('StatusUnexpectedError'), {
          unexpected: example('Unexpected error', bodyOf(statusShape.unexpected(500, EXAMPLE_REFERENCE))),
        }),
      ),
    },
  };
};
