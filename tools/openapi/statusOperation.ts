/**
 * The GET operations: `getSalesRegistrationStatus` and `getCaseStatus`, where an accepted record stands, with an
 * example of each status (their description is `operations/getStatus.md`); `findSalesRegistrationsByFrame`, the
 * caller's sales records for a frame number.
 */
import { salesRegistrationShape, statusShape } from '../../lib/http/shapes.ts';
import { FRAME_NUM_MAX_LENGTH } from '../../lib/status/frameRequest.ts';
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
          held: example(
            'Waiting out an outage of the downstream system',
            status({
              status: 'accepted',
              attempts: 0,
              updatedAt: at('09:30:12.345'),
              heldSince: at('09:12:40.118'),
            }),
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

/**
 * GET /erp/sales_registration?FrameNum=: the caller's sales records for a frame number, newest first; errors in
 * the sales operation's shape (5xx in plain text). Every answer of the contract but 403 (`withRefusal` adds it).
 *
 * @example
 * withRefusal(frameOperation(), 'SalesRegistrationRefused', salesRegistrationShape)
 */
export const frameOperation = (): JsonObject => {
  const frameNum = privateSale.FrameNum as string;
  const [id] = salesIds([privateSale]);
  const refused = (reason: string) => bodyOf(salesRegistrationShape.refused(400, reason));
  return {
    tags: ['Status'],
    operationId: 'findSalesRegistrationsByFrame',
    summary: 'Your sales registrations for a frame number',
    description: markdown('operations/findSalesRegistrationsByFrame.md'),
    parameters: [
      {
        name: 'FrameNum',
        in: 'query',
        required: true,
        description:
          'The frame number, once: trimmed as intake trims it, then 1 to 30 characters. Matched exactly (case ' +
          'included) against the FrameNum stored.',
        schema: { type: 'string', minLength: 1, maxLength: 30 },
        example: frameNum,
      },
    ],
    responses: {
      '200': response(
        'The caller’s sales records with this frame number, newest first; an empty list when there are none.',
        jsonContent(ref('SalesRegistrationsByFrame'), {
          found: example('One record', {
            FrameNum: frameNum,
            records: [
              {
                id,
                status: 'delivered',
                attempts: 1,
                acceptedAt: '2026-10-14T09:30:12.345Z',
                updatedAt: '2026-10-14T09:30:14.020Z',
                downstreamId: '0090012345',
              },
            ],
          }),
          none: example('No record of yours with this frame number', {
            FrameNum: 'EXAMPLEFRAME00099',
            records: [],
          }),
        }),
      ),
      '400': response(
        'FrameNum missing, blank, repeated or longer than 30 characters.',
        jsonContent(ref('SalesRegistrationRefused'), {
          missing: example('No FrameNum', refused('FrameNum is required')),
          blank: example('Blank FrameNum', refused('FrameNum must not be blank')),
          repeated: example('FrameNum given twice', refused('FrameNum must be a single value')),
          tooLong: example(
            'FrameNum over 30 characters',
            refused(`FrameNum must be at most ${FRAME_NUM_MAX_LENGTH} characters`),
          ),
        }),
      ),
      '500': response('Unexpected error; quote the reference to the web services team.', {
        'text/plain': {
          schema: ref('UnexpectedErrorText'),
          examples: {
            unexpected: example(
              'Unexpected error',
              bodyOf(salesRegistrationShape.unexpected(500, EXAMPLE_REFERENCE)),
            ),
          },
        },
      }),
    },
  };
};
