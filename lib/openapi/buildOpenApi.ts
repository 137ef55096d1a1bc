/**
 * Builds the OpenAPI 3.1 document of the public operations from the JSON schemas in `schemas/` (never a copy
 * by hand). `scripts/build-openapi.ts` writes it to `openapi.json`; `tests/openapi` fails when the committed file
 * drifts from what this module builds.
 */
import packageJson from '../../package.json' with { type: 'json' };
import caseRecordFile from '../../schemas/caseRecord.schema.json' with { type: 'json' };
import salesRegistrationFile from '../../schemas/salesRegistration.schema.json' with { type: 'json' };
import { caseShape, RETRY_AFTER_SECONDS, salesRegistrationShape, statusShape } from '../http/shapes.ts';
import { IdempotencyConflictError, IdempotencyInProgressError } from '../intake/errors.ts';
import { contentId, RECORD_ID_PATTERN } from '../intake/recordIds.ts';
import { validateCaseRecord } from '../validation/caseRecord.ts';
import { formatProblem } from '../validation/format.ts';
import { validateSalesRegistrations } from '../validation/salesRegistration.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const ref = (component: string): JsonObject => ({ $ref: `#/components/schemas/${component}` });
const isObject = (value: Json | undefined): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------------------
// schemas/ (JSON Schema draft-07 with our annotations) → OpenAPI 3.1 Schema Objects (JSON Schema 2020-12)
// ---------------------------------------------------------------------------------------------------------

/** Keywords whose value is one subschema. */
const SUBSCHEMA = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);
/** Keywords whose value is an array of subschemas. */
const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf']);
/** Keywords whose value maps names to subschemas (the names are data, never keywords). */
const SUBSCHEMA_MAP = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
]);

/**
 * Converts one draft-07 schema node to 2020-12: drops `$schema` and `$id` (the document is the resource now),
 * drops our `x-messages`/`x-when` annotations (they drive the service's error texts, not the API's shape),
 * renames `definitions` to `$defs`, array `items` to `prefixItems`, splits `dependencies`, and points local
 * `$ref`s at the component that holds the file's root (`base`). Values of data keywords (`enum`, `default`,
 * `examples`, `required`, …) are copied as they are.
 */
const convertSchema = (node: Json, base: string): Json => {
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  const tupleItems = Array.isArray(node.items);
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === '$schema' || keyword === '$id' || keyword.startsWith('x-')) continue;
    if (keyword === '$ref' && typeof value === 'string') {
      if (!value.startsWith('#'))
        throw new Error(`schemas/: only local $ref can be documented, not ${value}`);
      out.$ref = `${base}${value.slice(1).replace(/^\/definitions\//, '/$defs/')}`;
    } else if (keyword === 'items' && tupleItems) {
      out.prefixItems = (value as Json[]).map((item) => convertSchema(item, base));
    } else if (keyword === 'additionalItems') {
      if (tupleItems) out.items = convertSchema(value, base);
    } else if (keyword === 'dependencies' && isObject(value)) {
      for (const [name, dependency] of Object.entries(value)) {
        const target = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas';
        const map = (out[target] ?? {}) as JsonObject;
        map[name] = Array.isArray(dependency) ? dependency : convertSchema(dependency, base);
        out[target] = map;
      }
    } else if (SUBSCHEMA.has(keyword)) {
      out[keyword] = convertSchema(value, base);
    } else if (SUBSCHEMA_LIST.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((item) => convertSchema(item, base));
    } else if (SUBSCHEMA_MAP.has(keyword) && isObject(value)) {
      out[keyword === 'definitions' ? '$defs' : keyword] = Object.fromEntries(
        Object.entries(value).map(([name, schema]) => [name, convertSchema(schema, base)]),
      );
    } else {
      out[keyword] = structuredClone(value);
    }
  }
  return out;
};

/** A schema file converted, with its root at `#/components/schemas/<component>`. */
const fromSchemaFile = (file: unknown, component: string): JsonObject =>
  convertSchema(file as Json, `#/components/schemas/${component}`) as JsonObject;

const BOOLEAN_WORDS = ['true', 'false', 'on', 'off', 'yes', 'no', '1', '0'];
/** `true`, `ON`, `Yes`, … as an ECMA-262 pattern (JSON Schema has no case-insensitive flag). */
const BOOLEAN_STRING_PATTERN = `^(${BOOLEAN_WORDS.map((word) =>
  [...word]
    .map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`))
    .join(''),
).join('|')})$`;

/** The case record as an HTML form posts it: the same fields, booleans as strings. */
const caseRecordForm = (caseRecord: JsonObject): JsonObject => {
  const properties = caseRecord.properties as JsonObject;
  return {
    ...caseRecord,
    title: 'Case record (form)',
    description:
      'The case record as an HTML form (application/x-www-form-urlencoded) posts it: the same fields as CaseRecord, ' +
      'every value a string. A checkbox left unticked is simply absent, and absent stays absent downstream. ' +
      'Fields the form carries besides these (submit buttons, tracking fields) are ignored.',
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => {
        if (!isObject(schema) || schema.type !== 'boolean') return [name, schema];
        return [
          name,
          {
            description: `${String(schema.description)} As a form value: true/false, on/off, yes/no or 1/0, in any case.`,
            type: 'string',
            pattern: BOOLEAN_STRING_PATTERN,
          },
        ];
      }),
    ),
  };
};

// ---------------------------------------------------------------------------------------------------------
// Examples: valid requests checked by the real validators, answers built by the real response shapes
// ---------------------------------------------------------------------------------------------------------

/** The examples' dates are judged as of this day, so the document does not change with the calendar. */
const EXAMPLES_AS_OF = new Date('2026-11-01T00:00:00Z');
/** An API Gateway request id, as 5xx answers quote it. */
const EXAMPLE_REFERENCE = '8a1f6c2e-5b7d-4c3a-9e0f-1d2c3b4a5f60';

const privateSale: JsonObject = {
  DealerId: 1234,
  FrameNum: 'EXAMPLEFRAME00001',
  Model: 'Example Roadster 650',
  SaleDate: '2026-10-14',
  Name: 'Sample',
  Name2: 'Alex',
  Street: '1 Example Street',
  Town: 'Exampleton',
  Postcode: '2000',
  State: 'NSW',
  email: 'alex.sample@example.com',
  Phone: '+61 400 000 001',
  CommPriv: 'P',
  MoreInfo: 'Y',
  DOB: '1988-04-02',
  Sex: 'F',
};

const commercialSale: JsonObject = {
  DealerId: 123456,
  FrameNum: 'EXAMPLEFRAME00002',
  Model: 'Example Courier 125',
  SaleDate: '2026-10-15',
  Name: 'Placeholder',
  Name2: 'Jordan',
  CompanyName: 'Example Couriers Pty Ltd',
  Street: '2 Sample Road',
  Town: 'Testville',
  Postcode: 3000,
  email: 'fleet@example.com',
  Phone: '+61 3 9000 0002',
  CommPriv: 'C',
  Finance: 'Dealer finance',
};

const invalidSale: JsonObject = {
  ...commercialSale,
  DealerId: 12345,
  FrameNum: 'EXAMPLEFRAME00003',
  SaleDate: '2026-02-30',
  email: 'jordan.placeholder',
  CompanyName: '  ',
};

const jsonCase: JsonObject = {
  title: 'Mx',
  firstName: 'Alex',
  surname: 'Example',
  email: 'alex.example@example.com',
  mobile: '+61 400 000 002',
  addressPostcode: '3000',
  privacyConsent: true,
  subscribeToBrand: false,
  ownBrand: true,
  siteName: 'Motorcycles',
  comments: 'Please call me about a test ride.',
  origin: 'Website contact form',
  frameNo: 'EXAMPLEFRAME00001',
};

const formCase: JsonObject = {
  firstName: 'Sam',
  surname: 'Placeholder',
  email: 'sam.placeholder@example.com',
  homePhone: '+61 2 9000 0003',
  privacyConsent: 'on',
  ownBrand: 'no',
  siteName: 'Power equipment',
  comments: 'My mower will not start.',
  'vin-frame': 'EXAMPLEFRAME00004',
  submit: 'Send',
};

const invalidCase: JsonObject = {
  firstName: ' ',
  surname: 'Example',
  email: 'alex.example',
  frameNo: 'EXAMPLEFRAME00001',
  'vin-frame': 'EXAMPLEFRAME00009',
};

/** What the validators say about a body, as the 400 answer words it; a valid body here is a bug. */
const salesProblems = (body: Json): string => {
  const result = validateSalesRegistrations(structuredClone(body), EXAMPLES_AS_OF);
  if (result.ok) throw new Error('an invalid sales registration example is valid');
  return result.problems.map(formatProblem).join('; ');
};
const caseProblems = (body: Json): string => {
  const result = validateCaseRecord(structuredClone(body));
  if (result.ok) throw new Error('an invalid case example is valid');
  return result.problems.map(formatProblem).join('; ');
};

/** The ids the service gives the example records: ids are derived from the normalised content. */
const salesIds = (body: Json[]): string[] => {
  const result = validateSalesRegistrations(structuredClone(body), EXAMPLES_AS_OF);
  if (!result.ok)
    throw new Error(`a sales registration example is invalid: ${result.problems.map(formatProblem)}`);
  return result.value.map((record) => contentId('salesRegistration', record, 'example-dealer'));
};
const caseId = (body: Json): string => {
  const result = validateCaseRecord(structuredClone(body));
  if (!result.ok) throw new Error(`a case example is invalid: ${result.problems.map(formatProblem)}`);
  return contentId('caseRecord', result.value, 'example-web-forms');
};

/** The body of a real answer, parsed when the shape answers JSON. */
const bodyOf = (response: { body: string; headers?: Record<string, unknown> }): Json =>
  String(response.headers?.['content-type']).startsWith('application/json')
    ? (JSON.parse(response.body) as Json)
    : response.body;

const example = (summary: string, value: Json, description?: string): JsonObject =>
  description === undefined ? { summary, value } : { summary, description, value };

// ---------------------------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------------------------

const overview = `Dealer systems register vehicle sales with the back-office ERP, and web forms create customer cases in \
the CRM, through this service. Field names, paths and answer shapes are those of the earlier service, which \
existing dealer systems and web forms already call.

## 200 means accepted: validated and durably queued

A **200** answer means the request was validated and every record in it was durably queued. Nothing has reached \
the ERP or CRM yet: delivery happens asynchronously, with retries and backoff when the downstream system is \
briefly unavailable. Each accepted record has an id (for a case, its \`CrmId\`); look up where it stands with \
\`GET /erp/sales_registration/{id}\` or \`GET /crm/case/{CrmId}\`.

## Record states

| status | meaning |
|---|---|
| \`accepted\` | validated and queued; delivery is pending, or being retried after a transient failure (\`error\` then holds the last failure) |
| \`delivered\` | the ERP or CRM created the record; \`downstreamId\` holds its id there, when it gave one |
| \`rejected\` | the downstream system refused the record: permanent, not retried; \`error\` says why |
| \`failed\` | delivery attempts exhausted; the record is held in a dead-letter queue, from which operations may redrive it (it is then \`accepted\` again) |

Every accepted record ends in exactly one of \`delivered\`, \`rejected\` or \`failed\`.

## Duplicates and retries

- **24-hour duplicate detection.** A record whose content, after normalisation (trimming, defaults, value \
aliases), equals a record accepted in the last 24 hours gets the earlier id back and is not queued again. After \
24 hours the same content is accepted as a new record with a new id.
- **\`Idempotency-Key\`** (optional header, both POST operations): with it, the key alone decides what is a \
repeat. Repeating a key with the same body gets the same answer and queues nothing new; the same key with a \
different body gets **422**; the same key while its first request is still being processed gets **409** (retry \
shortly). The same content under a new key is a new record. A key is remembered for 24 hours.
- Whatever a client retries, each accepted record reaches the ERP or CRM **at most once as a new record**, so \
retrying after a timeout, a network error, **500** or **503** is safe.

## Errors

Refusals (4xx) name every problem, each field by its API name. Their shape differs per operation, as in the \
earlier service: \`{"success": false, "message": "..."}\` for sales registrations, a JSON string \
\`"Create Case failed: ..."\` for cases, \`{"message": "..."}\` for status look-ups. Errors on our side (5xx) \
carry a reference (the request id) to quote to the web services team. **503** with \`Retry-After\` means the \
queue or the store was briefly unavailable: retry the same request. Records stored before the failure are \
recognised as duplicates (the same ids) and delivered once, by the service itself, whether or not you retry.

## Limits

- \`POST /erp/sales_registration\`: 1 to 500 records, body at most 1 MiB.
- \`POST /crm/case\`: one case, body at most 64 KiB.

Paths are relative to the base URL: \`http://localhost:3000\` when running locally (\`PORT\` overrides 3000), the \
API Gateway stage URL on AWS.`;

const salesRegistrationDescription = `Validates every record and accepts the request **whole or not at all**: one \
invalid record refuses the request, and the 400 answer lists every problem of every record (up to 50, then how \
many more), each naming the record index (0 is the first record) and the field, e.g. \
\`[1].email is not a valid email address\`.

Beyond the schema:

- Strings are trimmed; a blank or whitespace-only string counts as missing.
- \`SaleDate\` must be a date that exists and not later than tomorrow (UTC); \`DOB\` a date that exists, in the past.
- \`CommPriv\` also takes \`Commercial\`/\`Private\` in any case (stored as \`C\`/\`P\`); \`Sex\` takes any case \
(stored upper case); \`Postcode\` may be a number (stored as a string); \`MoreInfo\` and \`AllowSharing\` default to \`N\`.
- An unknown property refuses the request, naming the property.

The answer lists the accepted records' ids in request order with each \`FrameNum\` as stored (trimmed). A record \
whose normalised content equals one accepted in the last 24 hours (also within the same request) gets the earlier \
id and is not queued again. **200 means validated and durably queued**: delivery to the ERP is asynchronous; \
follow it with \`GET /erp/sales_registration/{id}\`.`;

const caseDescription = `Accepts one case as JSON or as an HTML form (\`application/x-www-form-urlencoded\`), with \
the same fields either way. The 400 answer is a JSON string \`"Create Case failed: <reason>"\`; several reasons are \
joined with \`; \`, each naming the field by its API name.

Beyond the schema:

- Strings are trimmed; a blank or whitespace-only string counts as missing.
- Booleans (\`privacyConsent\`, \`subscribeToBrand\`, \`ownBrand\`) may be JSON booleans or, in either encoding, the \
strings \`true\`/\`false\`, \`on\`/\`off\`, \`yes\`/\`no\`, \`1\`/\`0\` in any case. A checkbox left unticked is simply \
absent, and absent stays absent downstream.
- \`frameNo\` and \`vin-frame\` both set the case's frame number; both given and different is invalid.
- Unknown fields are ignored and not forwarded (web forms carry extra fields such as submit buttons).
- A JSON array is invalid: one case per request.

\`CrmId\` is the case's external identifier in the CRM: the case is created there under exactly this key. A case \
whose normalised content equals one accepted in the last 24 hours gets the earlier \`CrmId\` and is not queued \
again. **200 means validated and durably queued**: delivery to the CRM is asynchronous; follow it with \
\`GET /crm/case/{CrmId}\`.`;

const statusDescription = (what: string) => `Where an accepted ${what} stands. \`attempts\` counts delivery \
requests that reached the downstream system (a token or CSRF fetch, and the one repeat it allows, are not new \
attempts). Answers 404 when no ${what} has this id.`;

// ---------------------------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------------------------

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
          'accepted: queued, delivery pending or being retried; delivered: created downstream; rejected: refused ' +
          'downstream, permanent; failed: attempts exhausted, held in the dead-letter queue (a redrive makes it ' +
          'accepted again).',
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
      downstreamId: {
        description: 'The record’s id in the ERP (document number) or CRM (case id), when it gave one.',
        type: 'string',
      },
      error: {
        description:
          'Why the downstream system refused the record (rejected), or the last failure (failed, or accepted while ' +
          'retrying). Personal data is blanked out.',
        type: 'string',
      },
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

const idempotencyKeyParameter: JsonObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Optional. A key of the caller’s choosing for one request, e.g. a UUID. Repeating the key with the same body ' +
    '(compared after normalisation) gets the same answer and queues nothing new; the same key with a different ' +
    'body gets 422; the same key while its first request is still being processed gets 409. With a key, the key ' +
    'alone decides what is a repeat: the same content under a new key is a new record. Keys are remembered for ' +
    '24 hours, separately for each operation. At most 255 characters ' +
    '(longer: 400); surrounding whitespace is ignored and a blank key counts as none.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: '5d0c7a8e-2f4b-4a1e-9c3d-7b6a5e4f3d2c',
};

const retryAfterHeader: JsonObject = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
  example: RETRY_AFTER_SECONDS,
};

// ---------------------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------------------

const jsonContent = (schema: JsonObject, examples: Record<string, JsonObject>): JsonObject => ({
  'application/json': { schema, examples },
});

const response = (description: string, content: JsonObject, headers?: JsonObject): JsonObject =>
  headers === undefined ? { description, content } : { description, headers, content };

const retryAfter: JsonObject = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };

/** The 422 answer of both POST operations, in the operation's shape. */
const idempotencyConflict = (
  refused: (status: number, reason: string) => Json,
  refusedContent: (examples: Record<string, JsonObject>) => JsonObject,
): JsonObject =>
  response(
    'The Idempotency-Key was used in the last 24 hours with a different body.',
    refusedContent({
      idempotencyConflict: example(
        'Idempotency-Key reused',
        refused(422, new IdempotencyConflictError().message),
      ),
    }),
  );

/** The 409 answer of both POST operations, in the operation's shape. */
const idempotencyInProgress = (
  refused: (status: number, reason: string) => Json,
  refusedContent: (examples: Record<string, JsonObject>) => JsonObject,
): JsonObject =>
  response(
    'A request with this Idempotency-Key is still being processed; retry shortly with the same key and body.',
    refusedContent({
      idempotencyInProgress: example(
        'Idempotency-Key in progress',
        refused(409, new IdempotencyInProgressError().message),
      ),
    }),
  );

/** The 503 answer of both POST operations, in the operation's shape. */
const queueUnavailable = (unexpected: (status: number) => JsonObject): JsonObject =>
  response(
    'The queue or the store is briefly unavailable; retry after Retry-After seconds (safe: nothing is accepted ' +
      'twice, and what was stored is delivered once).',
    unexpected(503),
    retryAfter,
  );

const salesRegistrationOperation = (): JsonObject => {
  const accepted = [privateSale, commercialSale];
  const ids = salesIds(accepted);
  const refused = (status: number, reason: string) => bodyOf(salesRegistrationShape.refused(status, reason));
  const refusedContent = (examples: Record<string, JsonObject>) =>
    jsonContent(ref('SalesRegistrationRefused'), examples);
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
    description: salesRegistrationDescription,
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

const caseOperation = (): JsonObject => {
  const refused = (status: number, reason: string) => bodyOf(caseShape.refused(status, reason));
  const refusedContent = (examples: Record<string, JsonObject>) => jsonContent(ref('CaseRefused'), examples);
  const unexpected = (status: number) =>
    jsonContent(ref('CaseUnexpectedError'), {
      unexpected: example('Unexpected error', bodyOf(caseShape.unexpected(status, EXAMPLE_REFERENCE))),
    });
  return {
    tags: ['Cases'],
    operationId: 'createCase',
    summary: 'Create a customer case in the CRM',
    description: caseDescription,
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

const statusOperation = (kind: 'salesRegistration' | 'caseRecord'): JsonObject => {
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
    description: statusDescription(sales ? 'sales registration' : 'case'),
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

/** Adds the 403 answer (no valid API key, and any further examples) to an operation, in its contract shape. */
const withRefusal = (
  operation: JsonObject,
  schema: string,
  shape: typeof statusShape,
  more: Record<string, JsonObject> = {},
): JsonObject => {
  const responses = operation.responses as JsonObject;
  const forbidden = response(
    'No valid API key in x-api-key' +
      (Object.keys(more).length > 0 ? ', or a record for a dealer the client is not bound to.' : '.'),
    jsonContent(ref(schema), {
      missingKey: example(
        'No API key',
        bodyOf(shape.refused(403, 'an API key is required in the x-api-key header')),
      ),
      ...more,
    }),
  );
  const ordered = Object.fromEntries(
    Object.entries({ ...responses, '403': forbidden }).sort(([a], [b]) => Number(a) - Number(b)),
  );
  return { ...operation, responses: ordered };
};

// ---------------------------------------------------------------------------------------------------------

/**
 * The OpenAPI 3.1.0 document of the public operations, built from `schemas/` and the contract's answers.
 *
 * @example
 * writeFileSync('openapi.json', `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
 */
export const buildOpenApiDocument = (): JsonObject => {
  const salesRegistrationRequest = fromSchemaFile(salesRegistrationFile, 'SalesRegistrationRequest');
  const salesRegistrationRecord = salesRegistrationRequest.items as JsonObject;
  salesRegistrationRequest.items = ref('SalesRegistrationRecord');
  const caseRecord = fromSchemaFile(caseRecordFile, 'CaseRecord');

  return {
    openapi: '3.1.0',
    info: {
      title: 'Dealer gateway',
      version: packageJson.version,
      summary:
        'Dealer sales registrations and web-form cases, validated, queued and delivered to the ERP and CRM.',
      description: overview,
    },
    servers: [
      { url: 'http://localhost:3000', description: 'Local service (`npm start`; PORT overrides 3000)' },
    ],
    tags: [
      { name: 'Sales registrations', description: 'Vehicle sales registered with the back-office ERP.' },
      { name: 'Cases', description: 'Customer cases (enquiries) created in the CRM.' },
      { name: 'Status', description: 'Where an accepted record stands in its delivery.' },
    ],
    // Every operation needs a client's API key in x-api-key (browser forms may be let in without one: see overview).
    security: [{ ApiKey: [] }],
    paths: {
      '/erp/sales_registration': {
        post: withRefusal(salesRegistrationOperation(), 'SalesRegistrationRefused', salesRegistrationShape, {
          foreignDealer: example(
            'A sale for a dealer the client is not bound to',
            bodyOf(
              salesRegistrationShape.refused(
                403,
                '[1].DealerId is not a dealer this client may register sales for',
              ),
            ),
          ),
        }),
      },
      '/erp/sales_registration/{id}': {
        get: withRefusal(statusOperation('salesRegistration'), 'NotFound', statusShape),
      },
      '/crm/case': { post: withRefusal(caseOperation(), 'CaseRefused', caseShape) },
      '/crm/case/{CrmId}': { get: withRefusal(statusOperation('caseRecord'), 'NotFound', statusShape) },
    },
    components: {
      schemas: {
        SalesRegistrationRequest: salesRegistrationRequest,
        SalesRegistrationRecord: salesRegistrationRecord,
        CaseRecord: caseRecord,
        CaseRecordForm: caseRecordForm(caseRecord),
        ...responseSchemas(),
      },
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
    },
  };
};
