/**
 * The document's `components`: the request schemas converted from `schemas/`, the answer schemas, the
 * `Idempotency-Key` parameter, the `Retry-After` header and the `x-api-key` security scheme.
 */

import { RETRY_AFTER_SECONDS } from '../../lib/http/shapes.ts';
import { RECORD_ID_PATTERN } from '../../lib/records/recordId.ts';
import caseRecordFile from '../../schemas/caseRecord.schema.json' with { type: 'json' };
import recordStateChangedFile from '../../schemas/events/recordStateChanged.schema.json' with {
  type: 'json',
};
import salesRegistrationFile from '../../schemas/salesRegistration.schema.json' with { type: 'json' };
import { caseRecordForm, fromSchemaFile, hoistDefs, type JsonObject } from './schemaConversion.ts';

/**
 * A reference to a schema of `components`.
 *
 * @example
 * ref('RecordId') // { $ref: '#/components/schemas/RecordId' }
 */
export const ref = (component: string): JsonObject => ({ $ref: `#/components/schemas/${component}` });

/**
 * The optional `test` mark of a test client's record (docs/API.md, "Test mode"): only ever `true`, and absent on a
 * live record, so a live answer keeps its shape.
 *
 * @example
 * testMark('record') // { description: 'Only on a test client’s record …', type: 'boolean', const: true }
 */
export const testMark = (what: 'record' | 'event'): JsonObject => ({
  description:
    what === 'record'
      ? 'Only on a test client’s record, in every state: the built-in simulators answered it (test mode), and it ' +
        'never reached the ERP or CRM. Absent on a live record. A test record never shows heldSince.'
      : 'Only on a change of a test client’s record (test mode: answered by the built-in simulators, never by the ' +
        'ERP or CRM). Absent on a live record’s change.',
  type: 'boolean',
  const: true,
});

/** The answers' schemas, written here: the service builds its answers in code, not from a schema. */
const responseSchemas = (): JsonObject => ({
  RecordId: {
    description:
      'Id of an accepted record: 32 lower-case hexadecimal characters derived from its normalised content, with a ' +
      'suffix when the same content was accepted again after the 24-hour duplicate window.',
    type: 'string',
    pattern: RECORD_ID_PATTERN,
  },
  SalesRegistrationAccepted: {
    title: 'Sales registrations accepted',
    description: 'Every record was validated and durably queued; delivery to the ERP follows asynchronously.',
    type: 'object',
    required: ['success', 'message', 'registrations'],
    properties: {
      success: { type: 'boolean', const: true },
      message: { description: 'Carries the number of records accepted.', type: 'string' },
      registrations: {
        description: 'One entry per record, in request order.',
        type: 'array',
        minItems: 1,
        maxItems: 500,
        items: {
          type: 'object',
          required: ['id', 'FrameNum'],
          properties: {
            id: { ...ref('RecordId'), description: 'For GET /erp/sales_registration/{id}.' },
            FrameNum: { description: 'The frame number as stored (trimmed).', type: 'string' },
          },
        },
      },
    },
  },
  SalesRegistrationRefused: {
    title: 'Sales registration refused',
    description: 'The request was refused as a whole; nothing of it was accepted.',
    type: 'object',
    required: ['success', 'message'],
    properties: {
      success: { type: 'boolean', const: false },
      message: {
        description: 'Every problem, joined with "; ", each naming the record index and the field.',
        type: 'string',
      },
    },
  },
  UnexpectedErrorText: {
    title: 'Unexpected error (plain text)',
    description:
      'The earlier service’s plain-text message, with the request id as reference for the web services team.',
    type: 'string',
  },
  CaseAccepted: {
    title: 'Case accepted',
    description: 'The case was validated and durably queued; delivery to the CRM follows asynchronously.',
    type: 'object',
    required: ['CrmId', 'CrmResponseSuccess'],
    properties: {
      CrmId: {
        ...ref('RecordId'),
        description: 'The case’s external identifier in the CRM; also for GET /crm/case/{CrmId}.',
      },
      CrmResponseSuccess: { type: 'boolean', const: true },
    },
  },
  CaseRefused: {
    title: 'Case refused',
    description: 'A JSON string: "Create Case failed: " and every reason, joined with "; ".',
    type: 'string',
    pattern: '^Create Case failed: ',
  },
  CaseUnexpectedError: {
    title: 'Case: unexpected error',
    type: 'object',
    required: ['error', 'details', 'stackTrace'],
    properties: {
      error: { type: 'string', const: 'An unexpected error occurred' },
      details: { description: 'Safe text with the request id as reference.', type: 'string' },
      stackTrace: { description: 'Always empty outside local debug mode.', type: 'string' },
    },
  },
  RecordStatus: {
    title: 'Record status',
    type: 'object',
    required: ['id', 'status', 'attempts', 'acceptedAt', 'updatedAt'],
    properties: {
      id: ref('RecordId'),
      status: {
        description:
          'accepted: queued, delivery pending, being retried or waiting out an outage (heldSince); delivered: ' +
          'created downstream; rejected: refused downstream, permanent; failed: attempts exhausted, held in the ' +
          'dead-letter queue (a redrive makes it accepted again).',
        type: 'string',
        enum: ['accepted', 'delivered', 'rejected', 'failed'],
      },
      attempts: {
        description: 'Delivery requests that reached the downstream system.',
        type: 'integer',
        minimum: 0,
      },
      acceptedAt: {
        description: 'When the record was accepted (ISO 8601).',
        type: 'string',
        format: 'date-time',
      },
      updatedAt: {
        description: 'When the status last changed (ISO 8601).',
        type: 'string',
        format: 'date-time',
      },
      heldSince: {
        description:
          'Only while the record is accepted and the downstream system it goes to is held (down for every record, ' +
          'or Salesforce’s daily API allowance nearly spent): since when (ISO 8601; may be before acceptedAt). ' +
          'The record waits without spending attempts and is delivered once the system answers again; nothing to do.',
        type: 'string',
        format: 'date-time',
      },
      downstreamId: {
        description: 'The record’s id in the ERP (document number) or CRM (case id), when it gave one.',
        type: 'string',
      },
      traceId: {
        description:
          'The record’s W3C trace id (32 lower-case hex digits): its request’s, when the request carried a valid ' +
          'traceparent header, else one the gateway started. Intake, each delivery attempt, the outcome, the event ' +
          'and each webhook post (whose traceparent header carries this id) are spans of this trace. Absent only on ' +
          'records accepted before tracing; not in the look-up by frame number.',
        type: 'string',
        pattern: '^[0-9a-f]{32}$',
      },
      error: {
        description:
          'Why the downstream system refused the record (rejected), or the last failure (failed, or accepted while ' +
          'retrying). Personal data is blanked out.',
        type: 'string',
      },
      test: testMark('record'),
    },
  },
  SalesRegistrationsByFrame: {
    title: 'Sales registrations by frame number',
    description:
      'The caller’s own sales records with this frame number, newest first; never another client’s.',
    type: 'object',
    required: ['FrameNum', 'records'],
    properties: {
      FrameNum: { description: 'The frame number asked for, trimmed (as stored).', type: 'string' },
      records: { type: 'array', items: ref('RecordStatus') },
    },
  },
  NotFound: {
    title: 'Not found',
    type: 'object',
    required: ['message'],
    properties: { message: { type: 'string' } },
  },
  StatusUnexpectedError: {
    title: 'Status look-up: unexpected error',
    type: 'object',
    required: ['message'],
    properties: { message: { description: 'With the request id as reference.', type: 'string' } },
  },
});

/** The optional `Idempotency-Key` header of both POST operations. */
const idempotencyKeyParameter: JsonObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Optional. A key of the caller’s choosing for one request, e.g. a UUID. Repeating the key with the same body ' +
    '(compared after normalisation) gets the same answer and queues nothing new; the same key with a different ' +
    'body gets 422; the same key while its first request is still being processed gets 409. With a key, the key ' +
    'alone decides what is a repeat: the same content under a new key is a new record. Keys are remembered for ' +
    '24 hours, separately for each operation. At most 255 characters (longer: 400). Surrounding whitespace is ' +
    'ignored, and an empty or blank key counts as none: the request is taken as one sent without the header ' +
    '(so the schema allows the empty string).',
  schema: { type: 'string', maxLength: 255 },
  example: '5d0c7a8e-2f4b-4a1e-9c3d-7b6a5e4f3d2c',
};

/** `Retry-After` of a 503 answer: the seconds the service sends (`lib/http/shapes.ts`). */
const retryAfterHeader: JsonObject = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
  example: RETRY_AFTER_SECONDS,
};

/**
 * The `components` object: request schemas from `schemas/` (the sales registration array's record as a
 * component of its own), the form variant of the case record, and the answers' schemas.
 *
 * @example
 * components().schemas.SalesRegistrationRequest.items // { $ref: '#/components/schemas/SalesRegistrationRecord' }
 */
export const components = (): JsonObject => {
  const salesRegistrationRequest = fromSchemaFile(salesRegistrationFile, 'SalesRegistrationRequest');
  const salesRegistrationRecord = salesRegistrationRequest.items as JsonObject;
  salesRegistrationRequest.items = ref('SalesRegistrationRecord');
  const caseRecord = fromSchemaFile(caseRecordFile, 'CaseRecord');
  return {
    // A schema file's definitions become components of their own (hoistDefs says why).
    schemas: hoistDefs({
      SalesRegistrationRequest: salesRegistrationRequest,
      SalesRegistrationRecord: salesRegistrationRecord,
      CaseRecord: caseRecord,
      CaseRecordForm: caseRecordForm(caseRecord),
      // The bus event's detail, of which a webhook gets the data (the document's `webhooks`); its EventBridge
      // envelope, the file's definitions/busEvent, follows as RecordStateChangedBusEvent.
      RecordStateChanged: fromSchemaFile(recordStateChangedFile, 'RecordStateChanged'),
      ...responseSchemas(),
    }),
    parameters: { IdempotencyKey: idempotencyKeyParameter },
    securitySchemes: {
      ApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description:
          'The key the operations team issued to your client. Missing or unknown: 403. Each client sees only its own records.',
      },
    },
    headers: { RetryAfter: retryAfterHeader },
  };
};
