import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as eventFeed } from '../../functions/eventFeed.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { cursorOf } from '../../lib/feed/feedCursor.ts';
import { feedKeyOf } from '../../lib/feed/feedKey.ts';
import { validateCaseRecord } from '../../lib/validation/caseRecord.ts';
import { formatProblem } from '../../lib/validation/format.ts';
import { validateSalesRegistrations } from '../../lib/validation/salesRegistration.ts';
import packageJson from '../../package.json' with { type: 'json' };
import caseRecordFile from '../../schemas/caseRecord.schema.json' with { type: 'json' };
import salesRegistrationFile from '../../schemas/salesRegistration.schema.json' with { type: 'json' };
import { testKeys, useTestKeys } from '../../testkit/apiKeys.ts';
import {
  apiEvent,
  frameGet,
  jsonPost,
  lambdaContext,
  statusGet,
} from '../../testkit/factories/apiGateway.ts';
import {
  buildOpenApiDocument,
  type Json,
  type JsonObject,
} from '../../tools/openapi/buildOpenApiDocument.ts';

const committedText = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
const committed = JSON.parse(committedText) as JsonObject;
const built = buildOpenApiDocument();

/** The statuses each kind of operation answers (docs/API.md#answers-side-by-side); 500 for anything unexpected. */
const DOCUMENTED_STATUSES = {
  post: ['200', '400', '403', '413', '415', '409', '422', '500', '503'],
  get: ['200', '403', '404', '500'],
  /** A look-up by query parameter: 400 for a bad parameter, never 404 (an empty list). */
  query: ['200', '400', '403', '500'],
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Every operation of the document with its path and method. */
const operations = (doc: JsonObject) =>
  Object.entries(doc.paths as JsonObject).flatMap(([path, item]) =>
    Object.entries(item as JsonObject)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation: operation as JsonObject })),
  );

/** Calls `visit` on every node of a JSON value with its JSON pointer. */
const walk = (node: Json, visit: (node: Json, pointer: string) => void, pointer = ''): void => {
  visit(node, pointer);
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) walk(child, visit, `${pointer}/${i}`);
  } else if (isObject(node)) {
    for (const [key, child] of Object.entries(node)) {
      walk(child, visit, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  }
};

/** The node a local `$ref` (`#/a/b`) points at, or undefined. */
const resolvePointer = (doc: JsonObject, ref: string): Json | undefined => {
  if (!ref.startsWith('#/')) return undefined;
  let node: Json | undefined = doc;
  for (const part of ref.slice(2).split('/')) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node)) node = Object.hasOwn(node, key) ? node[key] : undefined;
    else return undefined;
  }
  return node;
};

/** A schema file without its annotations: what the document must carry of it. */
const withoutAnnotations = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutAnnotations);
  if (!isObject(node)) return node;
  const kept: Record<string, unknown> = Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !['$schema', '$id', 'default'].includes(key) && !key.startsWith('x-'))
      .map(([key, value]) => [key, withoutAnnotations(value)]),
  );
  // A request's default is said in words (generators type a property with a `default` as required).
  if ('default' in node)
    kept.description = `${node.description} When absent: ${JSON.stringify(node.default)}.`;
  return kept;
};

const schemas =
  built.components && isObject(built.components) ? (built.components.schemas as JsonObject) : {};

describe('openapi.json', () => {
  it('is what buildOpenApiDocument() builds (run `node scripts/build-openapi.ts` after changing a schema)', () => {
    // Prepare
    const message =
      'openapi.json is out of date: run `node scripts/build-openapi.ts` and commit openapi.json';
    // Act
    const sameContent = committed;
    // Assess
    expect(sameContent, message).toEqual(built);
    // Same keys in the same order too: the file reads as the builder lays it out.
    expect(JSON.stringify(sameContent), message).toBe(JSON.stringify(built));
  });

  it('is pretty printed with a trailing newline', () => {
    expect(committedText.endsWith('}\n')).toBe(true);
    expect(committedText).toMatch(/^\{\n {2}"openapi": "3\.1\.0",\n/);
  });
});

describe('request schemas derived from schemas/', () => {
  it('SalesRegistrationRecord carries every property, constraint and requirement of the schema file', () => {
    // Prepare
    const fileRecord = salesRegistrationFile.items;
    const record = schemas.SalesRegistrationRecord as JsonObject;
    // Act
    const properties = record.properties as JsonObject;
    // Assess
    expect(Object.keys(properties)).toEqual(Object.keys(fileRecord.properties));
    for (const [name, schema] of Object.entries(fileRecord.properties)) {
      expect(properties[name], name).toEqual(withoutAnnotations(schema));
    }
    for (const name of fileRecord.required) expect(record.required).toContain(name);
    expect(record.required).toEqual(fileRecord.required);
    expect(record.additionalProperties).toBe(false);
    expect(record).toEqual(withoutAnnotations(fileRecord));
  });

  it('SalesRegistrationRequest is the schema file’s array of SalesRegistrationRecord', () => {
    const { items: _items, ...fileArray } = salesRegistrationFile;
    const { items, ...array } = schemas.SalesRegistrationRequest as JsonObject;
    expect(items).toEqual({ $ref: '#/components/schemas/SalesRegistrationRecord' });
    expect(array).toEqual(withoutAnnotations(fileArray));
    expect(array).toMatchObject({ type: 'array', minItems: 1, maxItems: 500 });
  });

  it('CaseRecord carries every property, constraint and requirement of the schema file', () => {
    const record = schemas.CaseRecord as JsonObject;
    const properties = record.properties as JsonObject;
    expect(Object.keys(properties)).toEqual(Object.keys(caseRecordFile.properties));
    for (const [name, schema] of Object.entries(caseRecordFile.properties)) {
      expect(properties[name], name).toEqual(withoutAnnotations(schema));
    }
    expect(record.required).toEqual(caseRecordFile.required);
    expect(record).toEqual(withoutAnnotations(caseRecordFile));
  });

  it('CaseRecordForm has the fields of CaseRecord, booleans as strings', () => {
    const form = schemas.CaseRecordForm as JsonObject;
    const formProperties = form.properties as Record<string, JsonObject>;
    expect(Object.keys(formProperties)).toEqual(Object.keys(caseRecordFile.properties));
    expect(form.required).toEqual(caseRecordFile.required);
    for (const [name, schema] of Object.entries(caseRecordFile.properties)) {
      const expected = schema.type === 'boolean' ? { type: 'string' } : withoutAnnotations(schema);
      expect(formProperties[name], name).toMatchObject(expected as JsonObject);
    }
  });

  it('leaves out the draft-07 identifiers and the service’s message annotations', () => {
    const found: string[] = [];
    walk(schemas, (node, pointer) => {
      if (!isObject(node)) return;
      for (const key of Object.keys(node)) {
        if (['$schema', '$id', 'definitions', 'x-messages', 'x-when'].includes(key))
          found.push(`${pointer}/${key}`);
      }
    });
    expect(found).toEqual([]);
  });
});

describe('OpenAPI 3.1 structure', () => {
  it('has the required top-level fields and the package version', () => {
    expect(built.openapi).toMatch(/^3\.1\.\d+$/);
    expect(built.info).toMatchObject({ title: expect.any(String), version: packageJson.version });
    expect(isObject(built.paths)).toBe(true);
    expect(built.jsonSchemaDialect ?? 'https://spec.openapis.org/oas/3.1/dialect/base').toMatch(
      /^https:\/\//,
    );
    expect(built.security).toEqual([{ ApiKey: [] }]);
    expect((built.components as JsonObject).securitySchemes).toMatchObject({
      ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    });
  });

  it('documents exactly the public operations with unique operation ids', () => {
    const found = operations(built).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(found.sort()).toEqual([
      'GET /crm/case/{CrmId}',
      'GET /erp/sales_registration',
      'GET /erp/sales_registration/{id}',
      'GET /events',
      'POST /crm/case',
      'POST /erp/sales_registration',
    ]);
    const ids = operations(built).map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has components for the request and answer shapes', () => {
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'SalesRegistrationRequest',
        'SalesRegistrationRecord',
        'CaseRecord',
        'SalesRegistrationAccepted',
        'SalesRegistrationRefused',
        'CaseAccepted',
        'CaseRefused',
        'CaseUnexpectedError',
        'RecordStatus',
        'NotFound',
      ]),
    );
    expect((schemas.CaseRefused as JsonObject).type).toBe('string');
  });

  it('resolves every $ref', () => {
    // Prepare
    const refs: string[] = [];
    walk(built, (node) => {
      if (isObject(node) && typeof node.$ref === 'string') refs.push(node.$ref);
    });
    // Act
    const unresolved = refs.filter((ref) => resolvePointer(built, ref) === undefined);
    // Assess
    expect(refs.length).toBeGreaterThan(20);
    expect(unresolved).toEqual([]);
  });

  it('declares every path template parameter as a required path parameter', () => {
    for (const { path, operation } of operations(built)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const parameters = ((operation.parameters ?? []) as JsonObject[])
        .map((p) => (typeof p.$ref === 'string' ? (resolvePointer(built, p.$ref) as JsonObject) : p))
        .filter((p) => p.in === 'path');
      expect(parameters.map((p) => p.name).sort(), path).toEqual(names.sort());
      for (const parameter of parameters) expect(parameter.required, path).toBe(true);
    }
  });

  it('answers every operation with the documented statuses, each with a description', () => {
    for (const { path, method, operation } of operations(built)) {
      const responses = operation.responses as Record<string, JsonObject>;
      expect(Object.keys(responses).sort(), `${method} ${path}`).toEqual(
        [
          ...DOCUMENTED_STATUSES[
            method === 'get' && !path.includes('{') ? 'query' : (method as 'get' | 'post')
          ],
        ].sort(),
      );
      for (const [status, response] of Object.entries(responses)) {
        expect(response.description, `${method} ${path} ${status}`).toEqual(expect.any(String));
      }
    }
  });

  it('documents Retry-After on 503 and the Idempotency-Key header on both POSTs', () => {
    for (const { path, method, operation } of operations(built).filter((o) => o.method === 'post')) {
      const responses = operation.responses as Record<string, JsonObject>;
      expect(responses['503'].headers, `${method} ${path}`).toHaveProperty('Retry-After');
      expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    }
    const parameter = resolvePointer(built, '#/components/parameters/IdempotencyKey') as JsonObject;
    expect(parameter).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(parameter.description).toMatch(/422/);
    expect(parameter.description).toMatch(/409/);
    expect(parameter.description).toMatch(/24 hours/);
  });

  it('answers 5xx of sales registrations in plain text and of cases as a JSON object', () => {
    const sales = resolvePointer(built, '#/paths/~1erp~1sales_registration/post/responses') as JsonObject;
    const cases = resolvePointer(built, '#/paths/~1crm~1case/post/responses') as JsonObject;
    for (const status of ['500', '503']) {
      expect(Object.keys((sales[status] as JsonObject).content as JsonObject)).toEqual(['text/plain']);
      expect((cases[status] as JsonObject).content).toEqual({
        'application/json': expect.objectContaining({
          schema: { $ref: '#/components/schemas/CaseUnexpectedError' },
        }),
      });
    }
    const caseBody = resolvePointer(built, '#/paths/~1crm~1case/post/requestBody/content') as JsonObject;
    expect(Object.keys(caseBody).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
  });
});

describe('webhooks', () => {
  it("documents what a client's webhook receives: the contract's event, the Standard Webhooks headers, no API key, no secret header", () => {
    // Act
    const post = ((built.webhooks as JsonObject).recordStateChanged as JsonObject).post as JsonObject;
    const body = (post.requestBody as JsonObject).content as JsonObject;
    const media = body['application/json'] as JsonObject;
    // Assess
    expect(post.security).toEqual([]);
    expect((post.parameters as JsonObject[]).map((p) => [p.name, p.in, p.required])).toEqual([
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ]);
    expect(JSON.stringify(built).toLowerCase()).not.toContain('x-dealer-gateway-secret');
    // The example is what lib/events makes of a change: the contract's fields only, nothing personal.
    const example = media.example as JsonObject;
    expect(Object.keys(example)).toEqual(['type', 'timestamp', 'data']);
    expect(Object.keys(example.data as JsonObject).sort()).toEqual(
      [
        'attempts',
        'DealerId',
        'error',
        'FrameNum',
        'kind',
        'previousState',
        'recordId',
        'sequence',
        'state',
      ].sort(),
    );
  });
});

describe('examples', () => {
  const DOC_ID = 'https://dealer-gateway.example.com/openapi.json';
  const ajv = new Ajv2020.default({
    strict: true,
    strictRequired: false,
    allErrors: true,
    allowUnionTypes: true,
  });
  addFormats.default(ajv);
  // The document as a schema resource, so that `#/components/schemas/…` resolves inside it.
  ajv.addKeyword({ keyword: 'components' });
  ajv.addSchema({ $id: DOC_ID, components: { schemas } });

  /** Local refs of an inline schema, pointed at the document resource. */
  const absolute = (schema: Json): Json => {
    if (Array.isArray(schema)) return schema.map(absolute);
    if (!isObject(schema)) return schema;
    return Object.fromEntries(
      Object.entries(schema).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' && value.startsWith('#')
          ? `${DOC_ID}${value}`
          : absolute(value),
      ]),
    );
  };
  const errorsOf = (schema: Json, value: Json): string => {
    const validate = ajv.compile(absolute(schema) as JsonObject);
    return validate(value) ? '' : ajv.errorsText(validate.errors);
  };

  /** Every (schema, example) pair of media types, parameters and headers, and every schema's `examples`. */
  const examplePairs = (): { where: string; schema: Json; value: Json }[] => {
    const pairs: { where: string; schema: Json; value: Json }[] = [];
    walk(built, (node, pointer) => {
      if (!isObject(node)) return;
      if (isObject(node.schema) && 'example' in node) {
        pairs.push({ where: `${pointer}/example`, schema: node.schema, value: node.example });
      }
      if (isObject(node.schema) && isObject(node.examples)) {
        for (const [name, example] of Object.entries(node.examples)) {
          if (isObject(example))
            pairs.push({ where: `${pointer}/examples/${name}`, schema: node.schema, value: example.value });
        }
      }
      if (pointer.startsWith('/components/schemas/') && Array.isArray(node.examples)) {
        for (const [i, value] of node.examples.entries()) {
          pairs.push({ where: `${pointer}/examples/${i}`, schema: { $ref: `#${pointer}` }, value });
        }
      }
    });
    return pairs;
  };

  it('validates each example against its schema', () => {
    // Prepare
    const pairs = examplePairs();
    // Act
    const failures = pairs
      .map(({ where, schema, value }) => ({ where, errors: errorsOf(schema, value) }))
      .filter(({ errors }) => errors !== '');
    // Assess
    expect(pairs.length).toBeGreaterThan(40);
    expect(failures).toEqual([]);
  });

  it('catches an example that does not fit its schema', () => {
    const errors = errorsOf(
      { $ref: '#/components/schemas/CaseAccepted' },
      { CrmId: 'not an id', CrmResponseSuccess: true },
    );
    expect(errors).toMatch(/pattern/);
  });

  /** The request body examples of an operation, by media type. */
  const requestExamples = (path: string, mediaType: string): Json[] => {
    const content = resolvePointer(
      built,
      `#/paths/${path.replace(/\//g, '~1')}/post/requestBody/content`,
    ) as JsonObject;
    const examples = (content[mediaType] as JsonObject).examples as Record<string, JsonObject>;
    return Object.values(examples).map((example) => example.value);
  };

  it('has sales registration request examples that the service’s validator accepts', () => {
    const examples = requestExamples('/erp/sales_registration', 'application/json');
    expect(examples.length).toBeGreaterThan(0);
    for (const body of examples) {
      const result = validateSalesRegistrations(structuredClone(body));
      expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
    }
  });

  it('has sales registration examples for dealers the shipped example client may register for (no 403)', () => {
    const clients = JSON.parse(readFileSync('config/clients.json', 'utf8')) as {
      clients: { name: string; dealers: number[] }[];
    };
    const dealers = clients.clients.find((c) => c.name === 'example-dealer')?.dealers ?? [];
    const used = requestExamples('/erp/sales_registration', 'application/json').flatMap((body) =>
      (body as { DealerId: number }[]).map((record) => record.DealerId),
    );
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((dealer) => !dealers.includes(dealer))).toEqual([]);
  });

  it.each(['application/json', 'application/x-www-form-urlencoded'])(
    'has %s case request examples that the service’s validator accepts',
    (mediaType) => {
      const examples = requestExamples('/crm/case', mediaType);
      expect(examples.length).toBeGreaterThan(0);
      for (const body of examples) {
        const result = validateCaseRecord(structuredClone(body));
        expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
      }
    },
  );

  it('has form examples whose values are all strings, as a form sends them', () => {
    for (const body of requestExamples('/crm/case', 'application/x-www-form-urlencoded')) {
      expect(Object.values(body as JsonObject).every((value) => typeof value === 'string')).toBe(true);
    }
  });
});

describe('hand-written answers match the service', () => {
  beforeAll(useTestKeys);

  const SALES = '#/paths/~1erp~1sales_registration/post/responses';
  const CASE = '#/paths/~1crm~1case/post/responses';
  const SALES_STATUS = '#/paths/~1erp~1sales_registration~1{id}/get/responses';
  const BY_FRAME = '#/paths/~1erp~1sales_registration/get/responses';
  const CASE_STATUS = '#/paths/~1crm~1case~1{CrmId}/get/responses';
  const EVENTS = '#/paths/~1events/get/responses';
  const feedGet = (query: Record<string, string>) =>
    apiEvent({
      path: '/events',
      httpMethod: 'GET',
      headers: { 'x-api-key': testKeys.dealer },
      queryStringParameters: query,
      multiValueQueryStringParameters: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    });
  const dayAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
  const eventId = `${'a'.repeat(32)}:2026-11-23T01:18:38.102Z`;
  const json = 'content/application~1json/examples';

  it.each([
    {
      name: 'sales: wrong content type',
      handler: salesHandler,
      event: jsonPost('/erp/sales_registration', [], { 'Content-Type': 'text/plain' }),
      documented: `${SALES}/415/${json}/wrongContentType`,
    },
    {
      name: 'sales: body too large',
      handler: salesHandler,
      event: jsonPost('/erp/sales_registration', `[${' '.repeat(1024 * 1024)}]`),
      documented: `${SALES}/413/${json}/tooLarge`,
    },
    {
      name: 'sales: malformed JSON',
      handler: salesHandler,
      event: jsonPost('/erp/sales_registration', '[{'),
      documented: `${SALES}/400/${json}/malformedJson`,
    },
    {
      name: 'sales: Idempotency-Key too long',
      handler: salesHandler,
      event: jsonPost('/erp/sales_registration', [], { 'Idempotency-Key': 'k'.repeat(256) }),
      documented: `${SALES}/400/${json}/longIdempotencyKey`,
    },
    {
      name: 'case: wrong content type',
      handler: caseHandler,
      event: jsonPost('/crm/case', {}, { 'Content-Type': 'text/plain' }),
      documented: `${CASE}/415/${json}/wrongContentType`,
    },
    {
      name: 'case: body too large',
      handler: caseHandler,
      event: jsonPost('/crm/case', `{"comments":"${'x'.repeat(64 * 1024)}"}`),
      documented: `${CASE}/413/${json}/tooLarge`,
    },
    {
      name: 'case: malformed JSON',
      handler: caseHandler,
      event: jsonPost('/crm/case', '{'),
      documented: `${CASE}/400/${json}/malformedJson`,
    },
    {
      name: 'sales registration status: unknown id',
      handler: recordStatus,
      event: statusGet('/erp/sales_registration/unknown', { id: 'unknown' }),
      documented: `${SALES_STATUS}/404/${json}/notFound`,
    },
    ...(
      [
        ['missing', undefined],
        ['blank', ' '],
        ['repeated', ['EXAMPLEFRAME00001', 'EXAMPLEFRAME00002']],
        ['tooLong', 'X'.repeat(31)],
      ] as const
    ).map(([example, frameNums]) => ({
      name: `sales by frame: ${example} FrameNum`,
      handler: recordStatus,
      event: frameGet(frameNums as string | string[] | undefined),
      documented: `${BY_FRAME}/400/${json}/${example}`,
    })),
    {
      name: 'event feed: malformed cursor',
      handler: eventFeed,
      event: feedGet({ after: 'not-a-cursor' }),
      documented: `${EVENTS}/400/${json}/malformedCursor`,
    },
    {
      name: 'event feed: foreign cursor',
      handler: eventFeed,
      event: feedGet({ after: cursorOf('example-web-forms', feedKeyOf(dayAgo(1), eventId)) }),
      documented: `${EVENTS}/400/${json}/foreignCursor`,
    },
    {
      name: 'event feed: expired cursor',
      handler: eventFeed,
      event: feedGet({ after: cursorOf('example-dealer', feedKeyOf(dayAgo(31), eventId)) }),
      documented: `${EVENTS}/400/${json}/expiredCursor`,
    },
    {
      name: 'event feed: limit out of range',
      handler: eventFeed,
      event: feedGet({ limit: '0' }),
      documented: `${EVENTS}/400/${json}/limitOutOfRange`,
    },
    {
      name: 'case status: unknown CrmId',
      handler: recordStatus,
      event: statusGet('/crm/case/unknown', { CrmId: 'unknown' }),
      documented: `${CASE_STATUS}/404/${json}/notFound`,
    },
  ])('$name: the documented status and body', async ({ handler, event, documented }) => {
    // Prepare
    const example = resolvePointer(built, documented) as JsonObject;
    const status = Number(/\/responses\/(\d{3})\//.exec(documented)?.[1]);
    // Act
    const response = await handler(event, lambdaContext());
    // Assess
    expect(example, documented).toBeDefined();
    expect(response.statusCode).toBe(status);
    expect(JSON.parse(response.body)).toEqual(example.value);
  });
});
