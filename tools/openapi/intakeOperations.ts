/**
 * The two POST operations, `registerSales` and `createCase`: request bodies with their examples and every
 * answer of the contract but 403 (`withRefusal` adds it). Descriptions come from `operations/<operationId>.md`.
 */
import { caseShape, salesRegistrationShape } from '../../lib/http/shapes.ts';
import { ref } from './components.ts';
import {
  bodyOf,
  caseId,
  caseProblems,
  commercialSale,
  EXAMPLE_REFERENCE,
  example,
  formCase,
  invalidCase,
  invalidSale,
  jsonCase,
  privateSale,
  salesIds,
  salesProblems,
} from './examples.ts';
import { markdown } from './markdown.ts';
import {
  idempotencyConflict,
  idempotencyInProgress,
  jsonContent,
  queueUnavailable,
  type Refused,
  type RefusedContent,
  response,
} from './responses.ts';
import type { JsonObject } from './schemaConversion.ts';

/**
 * POST /erp/sales_registration: an array of records, accepted whole or not at all; 5xx in plain text.
 *
 * @example
 * withRefusal(salesRegistrationOperation(), 'SalesRegistrationRefused', salesRegistrationShape)
 */
export const salesRegistrationOperation = (): JsonObject => {
  const accepted = [privateSale, commercialSale];
  const ids = salesIds(accepted);
  const refused: Refused = (status, reason) => bodyOf(salesRegistrationShape.refused(status, reason));
  const refusedContent: RefusedContent = (examples) => jsonContent(ref('SalesRegistrationRefused'), examples);
  const unexpected = (status: number) => ({
    'text/plain': {
      schema: ref('UnexpectedErrorText'),
      examples: {
        unexpected: example(
          'Unexpected error',
          bodyOf(salesRegistrationShape.unexpected(status, EXAMPLE_REFERENCE)),
        ),
      },
    },
  });
  return {
    tags: ['Sales registrations'],
    operationId: 'registerSales',
    summary: 'Register vehicle sales with the ERP',
    description: markdown('operations/registerSales.md'),
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    requestBody: {
      required: true,
      description: 'A JSON array of 1 to 500 sales registration records (a charset parameter is fine).',
      content: jsonContent(ref('SalesRegistrationRequest'), {
        privateAndCommercial: example('A private and a commercial sale', accepted),
      }),
    },
    responses: {
      '200': response(
        'Accepted: every record validated and durably queued. Delivery is asynchronous: see the status look-up.',
        jsonContent(ref('SalesRegistrationAccepted'), {
          accepted: example('Two sales accepted', {
            success: true,
            message: `${ids.length} sales registration(s) accepted`,
            registrations: ids.map((id, i) => ({ id, FrameNum: String(accepted[i].FrameNum) })),
          }),
        }),
      ),
      '400': response(
        'Invalid: malformed JSON, not an array, an empty array, or invalid records. Nothing was accepted.',
        refusedContent({
          invalidRecord: example(
            'The second record is invalid',
            refused(400, salesProblems([privateSale, invalidSale])),
          ),
          emptyArray: example('An empty array', refused(400, salesProblems([]))),
          notAnArray: example('An object instead of an array', refused(400, salesProblems(privateSale))),
          malformedJson: example('Malformed JSON', refused(400, 'body is not valid JSON')),
          longIdempotencyKey: example(
            'Idempotency-Key too long',
            refused(400, 'Idempotency-Key must be at most 255 characters'),
          ),
        }),
      ),
      '413': response(
        'The body is larger than 1 MiB.',
        refusedContent({ tooLarge: example('Body too large', refused(413, 'body must be at most 1 MiB')) }),
      ),
      '415': response(
        'The Content-Type is not application/json.',
        refusedContent({
          wrongContentType: example(
            'Wrong content type',
            refused(415, 'Content-Type must be application/json'),
          ),
        }),
      ),
      '409': idempotencyInProgress(refused, refusedContent),
      '422': idempotencyConflict(refused, refusedContent),
      '500': response('Unexpected error; quote the reference to the web services team.', unexpected(500)),
      '503': queueUnavailable(unexpected),
    },
  };
};

/**
 * POST /crm/case: one case as JSON or as an HTML form; 5xx as a JSON object.
 *
 * @example
 * withRefusal(caseOperation(), 'CaseRefused', caseShape)
 */
export const caseOperation = (): JsonObject => {
  const refused: Refused = (status, reason) => bodyOf(caseShape.refused(status, reason));
  const refusedContent: RefusedContent = (examples) => jsonContent(ref('CaseRefused'), examples);
  const unexpected = (status: number) =>
    jsonContent(ref('CaseUnexpectedError'), {
      unexpected: example('Unexpected error', bodyOf(caseShape.unexpected(status, EXAMPLE_REFERENCE))),
    });
  return {
    tags: ['Cases'],
    operationId: 'createCase',
    summary: 'Create a customer case in the CRM',
    description: markdown('operations/createCase.md'),
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    requestBody: {
      required: true,
      description: 'One case object, as JSON or as an HTML form with the same fields.',
      content: {
        'application/json': {
          schema: ref('CaseRecord'),
          examples: { json: example('A case from a web page', jsonCase) },
        },
        'application/x-www-form-urlencoded': {
          schema: ref('CaseRecordForm'),
          examples: {
            form: example(
              'A case from an HTML form',
              formCase,
              'Booleans as strings, an unticked checkbox (subscribeToBrand) absent, vin-frame instead of frameNo, ' +
                'and a submit button that is ignored.',
            ),
          },
        },
      },
    },
    responses: {
      '200': response(
        'Accepted: validated and durably queued. Delivery is asynchronous: see the status look-up.',
        jsonContent(ref('CaseAccepted'), {
          accepted: example('Case accepted', { CrmId: caseId(jsonCase), CrmResponseSuccess: true }),
        }),
      ),
      '400': response(
        'Invalid: every reason, joined with "; ". Nothing was accepted.',
        refusedContent({
          invalidEmail: example(
            'Invalid email',
            refused(400, caseProblems({ ...jsonCase, email: 'alex.example' })),
          ),
          severalProblems: example('Several problems', refused(400, caseProblems(invalidCase))),
          array: example('A JSON array instead of one case', refused(400, caseProblems([jsonCase]))),
          malformedJson: example('Malformed JSON', refused(400, 'body is not valid JSON')),
        }),
      ),
      '413': response(
        'The body is larger than 64 KiB.',
        refusedContent({ tooLarge: example('Body too large', refused(413, 'body must be at most 64 KiB')) }),
      ),
      '415': response(
        'The Content-Type is neither application/json nor application/x-www-form-urlencoded.',
        refusedContent({
          wrongContentType: example(
            'Wrong content type',
            refused(415, 'Content-Type must be application/json or application/x-www-form-urlencoded'),
          ),
        }),
      ),
      '409': idempotencyInProgress(refused, refusedContent),
      '422': idempotencyConflict(refused, refusedContent),
      '500': response('Unexpected error; quote the details to the web services team.', unexpected(500)),
      '503': queueUnavailable(unexpected),
    },
  };
};
