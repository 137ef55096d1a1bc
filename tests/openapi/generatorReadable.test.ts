/**
 * openapi.json as a code generator (openapi-typescript and the like) reads it: every schema typed where a
 * generator looks for a type, no keyword where a generator reads properties, and the Idempotency-Key parameter
 * agreeing with what the service does with a key. These name the schema at fault; generatedClient.test.ts runs
 * openapi-typescript itself and type-checks the README's calls on what it generates.
 */
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyOf } from '../../lib/intake/idempotencyKey.ts';
import type { Json, JsonObject } from '../../tools/openapi/buildOpenApiDocument.ts';

const committed = JSON.parse(
  readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'),
) as JsonObject;

const isObject = (value: Json | undefined): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const at = (doc: JsonObject, ...path: string[]): Json | undefined =>
  path.reduce<Json | undefined>((node, key) => (isObject(node) ? node[key] : undefined), doc);

/** Keywords whose value is one subschema. */
const ONE = ['items', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
/** Keywords whose value is a list of subschemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to subschemas. */
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/** Every Schema Object of an OpenAPI document, with its JSON pointer: the components' and every `schema`. */
const schemasOf = (doc: JsonObject): { pointer: string; schema: JsonObject }[] => {
  const found: { pointer: string; schema: JsonObject }[] = [];
  const schema = (node: Json | undefined, pointer: string): void => {
    if (!isObject(node)) return;
    found.push({ pointer, schema: node });
    for (const keyword of ONE) schema(node[keyword], `${pointer}/${keyword}`);
    for (const keyword of LIST) {
      const list = node[keyword];
      if (Array.isArray(list))
        for (const [i, item] of list.entries()) schema(item, `${pointer}/${keyword}/${i}`);
    }
    for (const keyword of MAP) {
      const map = node[keyword];
      if (isObject(map))
        for (const [name, item] of Object.entries(map)) schema(item, `${pointer}/${keyword}/${name}`);
    }
  };
  // Outside schemas: a `schema` member (parameters, headers, media types) holds one wherever it appears.
  const outside = (node: Json | undefined, pointer: string): void => {
    if (Array.isArray(node)) for (const [i, item] of node.entries()) outside(item, `${pointer}/${i}`);
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'schema') schema(value, `${pointer}/schema`);
      else if (!(pointer === '/components' && key === 'schemas')) outside(value, `${pointer}/${key}`);
    }
  };
  for (const [name, item] of Object.entries((at(doc, 'components', 'schemas') ?? {}) as JsonObject))
    schema(item, `/components/schemas/${name}`);
  outside(doc, '');
  return found;
};

/** The components that requests carry (a generator types them as what the caller must send). */
const REQUEST_COMPONENTS = ['SalesRegistrationRecord', 'CaseRecord', 'CaseRecordForm'];

/** What a generator would read wrong: the pointers of the offending schemas, each with why. */
const unreadable = (doc: JsonObject): string[] =>
  schemasOf(doc).flatMap(({ pointer, schema }) => {
    const problems: string[] = [];
    if (isObject(schema.properties))
      for (const name of Object.keys(schema.properties))
        if (name.startsWith('$')) problems.push(`${pointer}/properties: a property named ${name}`);
    // openapi-typescript (defaultNonNullable, its default) types a property with a default as always present:
    // in a request schema that makes the caller send what the service fills in.
    if (
      isObject(schema.properties) &&
      REQUEST_COMPONENTS.some((name) => pointer === `/components/schemas/${name}`)
    )
      for (const [name, property] of Object.entries(schema.properties))
        if (isObject(property) && 'default' in property)
          problems.push(
            `${pointer}/properties/${name}: a default in a request schema (say it in the description)`,
          );
    for (const keyword of ['$defs', 'definitions'])
      if (keyword in schema) problems.push(`${pointer}: ${keyword} inside a schema (hoist it to components)`);
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schema[keyword];
      if (!Array.isArray(branches)) continue;
      for (const [i, branch] of branches.entries())
        if (!isObject(branch) || !['type', '$ref', 'const', 'enum'].some((k) => k in branch))
          problems.push(`${pointer}/${keyword}/${i}: a branch without type, $ref, const or enum`);
    }
    return problems;
  });

describe('openapi.json, as a generator reads it', () => {
  it('finds what a generator reads wrong (planted: an untyped branch, a request default, a nested $defs, a $-property)', () => {
    // Prepare
    const planted = structuredClone(committed);
    const status = at(planted, 'components', 'schemas', 'RecordStatus') as JsonObject;
    (status.properties as JsonObject).attempts = {
      type: 'integer',
      anyOf: [{ minimum: 0 }, { type: 'integer', maximum: 9999 }],
    };
    (at(planted, 'components', 'schemas', 'NotFound') as JsonObject).$defs = { x: { type: 'string' } };
    const caseProperties = at(planted, 'components', 'schemas', 'CaseRecord', 'properties') as JsonObject;
    (caseProperties.comments as JsonObject).default = '';
    const webhookBody = at(
      planted,
      ...'webhooks/recordStateChanged/post/requestBody/content/application~1json/schema'
        .split('/')
        .map((part) => part.replace('~1', '/')),
    ) as JsonObject;
    (webhookBody.properties as JsonObject).$defs = { type: 'object' };
    // Act
    const before = new Set(unreadable(committed));
    const problems = unreadable(planted).filter((problem) => !before.has(problem));
    // Assess
    expect(problems.sort()).toEqual([
      '/components/schemas/CaseRecord/properties/comments: a default in a request schema (say it in the description)',
      '/components/schemas/NotFound: $defs inside a schema (hoist it to components)',
      '/components/schemas/RecordStatus/properties/attempts/anyOf/0: a branch without type, $ref, const or enum',
      '/webhooks/recordStateChanged/post/requestBody/content/application/json/schema/properties: a property named $defs',
    ]);
  });

  it('reaches the schemas of components, parameters, headers, request bodies, answers and webhooks', () => {
    const pointers = schemasOf(committed).map(({ pointer }) => pointer);
    expect(pointers).toContain('/components/schemas/SalesRegistrationRecord/properties/DealerId');
    expect(pointers).toContain('/components/parameters/IdempotencyKey/schema');
    expect(pointers).toContain('/components/headers/RetryAfter/schema');
    expect(pointers.some((p) => p.startsWith('/webhooks/recordStateChanged/post/requestBody/'))).toBe(true);
    expect(pointers.some((p) => /^\/paths\/.*\/responses\/200\/content\//.test(p))).toBe(true);
    expect(pointers.length).toBeGreaterThan(200);
  });

  it('has no schema a generator reads wrong', () => {
    expect(unreadable(committed)).toEqual([]);
  });

  it('types each of DealerId’s branches as an integer, so a generator types DealerId', () => {
    // Act
    const dealerId = at(
      committed,
      'components',
      'schemas',
      'SalesRegistrationRecord',
      'properties',
      'DealerId',
    ) as JsonObject;
    // Assess
    expect(dealerId.anyOf).toEqual([
      { type: 'integer', minimum: 1000, maximum: 9999 },
      { type: 'integer', minimum: 100000, maximum: 999999 },
    ]);
  });

  it('holds the bus event’s envelope as a component of its own, its detail the event', () => {
    const schemas = at(committed, 'components', 'schemas') as JsonObject;
    expect(schemas.RecordStateChanged).not.toHaveProperty('$defs');
    expect(
      at(committed, 'components', 'schemas', 'RecordStateChangedBusEvent', 'properties', 'detail'),
    ).toEqual({
      $ref: '#/components/schemas/RecordStateChanged',
    });
  });
});

describe('openapi.json, the Idempotency-Key parameter against what the service does with a key', () => {
  const schema = at(committed, 'components', 'parameters', 'IdempotencyKey', 'schema') as JsonObject;
  const validate = new Ajv2020.default({ strict: true }).compile(schema);
  const withKey = (key: string) =>
    ({ headers: { 'idempotency-key': key } }) as unknown as APIGatewayProxyEvent;

  it.each(['', ' ', ' \t '])('allows a blank key (%j), which the service takes as no key', (key) => {
    expect(idempotencyKeyOf(withKey(key))).toBeUndefined();
    expect(validate(key)).toBe(true);
  });

  it('allows a key of 255 characters and refuses one of 256, as the service does', () => {
    expect(idempotencyKeyOf(withKey('k'.repeat(255)))).toBe('k'.repeat(255));
    expect(validate('k'.repeat(255))).toBe(true);
    expect(() => idempotencyKeyOf(withKey('k'.repeat(256)))).toThrow(/at most 255/);
    expect(validate('k'.repeat(256))).toBe(false);
  });

  it('says what a blank key means', () => {
    const parameter = at(committed, 'components', 'parameters', 'IdempotencyKey') as JsonObject;
    expect(parameter.description).toMatch(/blank .*(counts as none|no key)/i);
  });
});
