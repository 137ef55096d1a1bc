import type { ErrorObject } from 'ajv';
import { nameForMessage } from './format.ts';
import type { Problem } from './types.ts';

type SchemaNode = Record<string, unknown>;

/** Resolves an ajv schemaPath such as `#/items/properties/email/format` to the schema object holding the keyword. */
const schemaAt = (root: SchemaNode, schemaPath: string): SchemaNode | undefined => {
  const segments = schemaPath.replace(/^#\/?/, '').split('/').slice(0, -1);
  let node: unknown = root;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as SchemaNode)[decodeURIComponent(segment.replace(/~1/g, '/').replace(/~0/g, '~'))];
  }
  return node !== null && typeof node === 'object' ? (node as SchemaNode) : undefined;
};

/** The property schema an error belongs to: the nearest `properties/<name>` on its schema path. */
const propertySchema = (root: SchemaNode, schemaPath: string): SchemaNode | undefined => {
  const match = /^(.*\/properties\/[^/]+)\//.exec(schemaPath);
  return match ? schemaAt(root, `${match[1]}/x`) : schemaAt(root, schemaPath);
};

const typeNames: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

/** Plain-language rule for an ajv error, unless the schema names one in `x-messages`. */
const defaultRule = (error: ErrorObject): string => {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => typeNames[t] ?? t)
        .join(' or ')}`;
    case 'maxLength':
      return `must be at most ${p.limit} characters`;
    case 'minLength':
      return 'must not be blank';
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return `is not a valid ${p.format}`;
    case 'pattern':
      return 'is not in the expected form';
    case 'minimum':
    case 'maximum':
      return `must be ${p.comparison} ${p.limit}`;
    case 'maxItems':
      return `must hold at most ${p.limit} items`;
    case 'minItems':
      return `must hold at least ${p.limit} items`;
    default:
      return 'is not valid';
  }
};

const fieldOf = (instancePath: string): { index?: number; field?: string } => {
  const parts = instancePath.split('/').slice(1);
  const out: { index?: number; field?: string } = {};
  if (parts.length > 0 && /^\d+$/.test(parts[0])) out.index = Number(parts.shift());
  if (parts.length > 0) out.field = parts.join('.').replace(/~1/g, '/').replace(/~0/g, '~');
  return out;
};

/**
 * Turns ajv errors into problems people can act on: the record index, the field by its API name and the rule.
 * Rules come from the schema's `x-messages` (by keyword, or `*` for any) and `x-when`, else from plain defaults.
 * Errors that only summarise others (`anyOf`, `if`) are dropped, and repeats are merged.
 *
 * @example
 * describeErrors(validate.errors ?? [], schema)
 * // [{ index: 1, field: 'email', rule: 'is not a valid email address' }]
 */
export const describeErrors = (errors: ErrorObject[], schema: SchemaNode): Problem[] => {
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    let problem: Problem;
    if (error.keyword === 'required') {
      const when = schemaAt(schema, error.schemaPath)?.['x-when'];
      problem = {
        ...fieldOf(error.instancePath),
        field: String((error.params as { missingProperty: string }).missingProperty),
        rule: when ? `is required ${when}` : 'is required',
      };
    } else if (error.keyword === 'additionalProperties') {
      problem = {
        ...fieldOf(error.instancePath),
        // Unknown names are echoed so the caller sees which one; cut short, never a 100 KB key.
        field: nameForMessage(String((error.params as { additionalProperty: string }).additionalProperty)),
        rule: 'is not a known field',
      };
    } else {
      const messages = propertySchema(schema, error.schemaPath)?.['x-messages'] as
        | Record<string, string>
        | undefined;
      const custom = messages?.[error.keyword] ?? messages?.['*'];
      if (!custom && error.keyword === 'anyOf') continue;
      problem = { ...fieldOf(error.instancePath), rule: custom ?? defaultRule(error) };
    }
    const key = `${problem.index}|${problem.field}|${problem.rule}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
};
