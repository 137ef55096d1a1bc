/**
 * The request schemas of `schemas/` (JSON Schema draft-07 with the service's annotations) as OpenAPI 3.1 Schema
 * Objects (JSON Schema 2020-12), and the case record as an HTML form posts it.
 */

/** A JSON value: what the document is made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object (not null, not an array). */
export type JsonObject = { [key: string]: Json };

/** Whether a JSON value is an object (not null, not an array). */
export const isObject = (value: Json | undefined): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

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
 * `$ref`s at the component that holds the file's root (`base`). Values of data keywords (`enum`, `examples`,
 * `required`, …) are copied as they are, but `default`: a request's default is what the service fills in when the
 * field is absent, and generators (openapi-typescript, by default) type a property with a `default` as one the
 * caller must send, so the default is said in the description instead.
 *
 * @example
 * convertSchema({ $ref: '#/definitions/date' }, '#/components/schemas/CaseRecord')
 * // { $ref: '#/components/schemas/CaseRecord/$defs/date' }
 */
export const convertSchema = (node: Json, base: string): Json => {
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  const tupleItems = Array.isArray(node.items);
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === '$schema' || keyword === '$id' || keyword === 'default' || keyword.startsWith('x-'))
      continue;
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
  if ('default' in node) {
    const absent = `When absent: ${JSON.stringify(node.default)}.`;
    out.description = typeof out.description === 'string' ? `${out.description} ${absent}` : absent;
  }
  return out;
};

/**
 * A schema file converted, with its root at `#/components/schemas/<component>`.
 *
 * @example
 * fromSchemaFile(caseRecordFile, 'CaseRecord')
 */
export const fromSchemaFile = (file: unknown, component: string): JsonObject =>
  convertSchema(file as Json, `#/components/schemas/${component}`) as JsonObject;

const BOOLEAN_WORDS = ['true', 'false', 'on', 'off', 'yes', 'no', '1', '0'];
/** `true`, `ON`, `Yes`, … as an ECMA-262 pattern (JSON Schema has no case-insensitive flag). */
const BOOLEAN_STRING_PATTERN = `^(${BOOLEAN_WORDS.map((word) =>
  [...word]
    .map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`))
    .join(''),
).join('|')})$`;

/**
 * The case record as an HTML form posts it: the same fields, booleans as strings.
 *
 * @example
 * caseRecordForm(fromSchemaFile(caseRecordFile, 'CaseRecord')).properties.privacyConsent.type // 'string'
 */
export const caseRecordForm = (caseRecord: JsonObject): JsonObject => {
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

/** A JSON value with every `$ref` that `renamed` names replaced by its new target. */
const withRefs = (node: Json, renamed: ReadonlyMap<string, string>): Json => {
  if (Array.isArray(node)) return node.map((item) => withRefs(item, renamed));
  if (!isObject(node)) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' ? (renamed.get(value) ?? value) : withRefs(value, renamed),
    ]),
  );
};

/**
 * The components' schemas with each schema's `$defs` moved out to components of their own, named after their
 * owner (`RecordStateChanged`'s `busEvent`: `RecordStateChangedBusEvent`) and placed right after it, every
 * `$ref` to them repointed. Generators read a Schema Object's members as its shape: a nested `$defs` comes out as
 * a property named `$defs`, and the definitions themselves get no type of their own.
 *
 * @example
 * hoistDefs({ A: { $defs: { b: { type: 'string' } }, properties: { x: { $ref: '#/components/schemas/A/$defs/b' } } } })
 * // { A: { properties: { x: { $ref: '#/components/schemas/AB' } } }, AB: { type: 'string' } }
 */
export const hoistDefs = (schemas: JsonObject): JsonObject => {
  const renamed = new Map<string, string>();
  const hoisted: [string, Json][] = [];
  for (const [component, schema] of Object.entries(schemas)) {
    if (!isObject(schema) || !isObject(schema.$defs)) {
      hoisted.push([component, schema]);
      continue;
    }
    const { $defs, ...rest } = schema;
    hoisted.push([component, rest]);
    for (const [name, definition] of Object.entries($defs)) {
      const target = `${component}${name[0].toUpperCase()}${name.slice(1)}`;
      if (Object.hasOwn(schemas, target) || hoisted.some(([taken]) => taken === target))
        throw new Error(
          `openapi: ${component}'s $defs/${name} would take the name ${target}, already a component`,
        );
      renamed.set(`#/components/schemas/${component}/$defs/${name}`, `#/components/schemas/${target}`);
      hoisted.push([target, definition]);
    }
  }
  return withRefs(Object.fromEntries(hoisted), renamed) as JsonObject;
};
