import { readFileSync } from 'node:fs';
import { isObject } from '../../json.ts';
import shippedMapping from './caseMapping.json' with { type: 'json' };
import { CASE_FIELDS, SALESFORCE_FIELD_PATTERN } from './constants.ts';
import { CaseMappingError } from './errors.ts';
import type { CaseField, CaseMapping, MappingRule } from './types.ts';

const RULE_KEYS = ['field', 'join', 'firstOf', 'const'] as const;

const isCaseField = (value: unknown): value is CaseField =>
  typeof value === 'string' && (CASE_FIELDS as string[]).includes(value);

/** Checks one entry; returns the problem, or the rule when it is sound. */
function parseRule(rule: unknown): MappingRule | string {
  if (!isObject(rule)) return 'must be an object such as {"field": "email"}';
  const kinds = RULE_KEYS.filter((key) => key in rule);
  if (kinds.length !== 1) return `must have exactly one of ${RULE_KEYS.map((key) => `"${key}"`).join(', ')}`;
  const [kind] = kinds;
  const allowed: string[] = kind === 'const' ? [kind] : [kind, 'maxLength'];
  if (kind === 'join') allowed.push('separator');
  const extra = Object.keys(rule).find((key) => !allowed.includes(key));
  if (extra) return `has an unknown key "${extra}"`;
  const { maxLength } = rule;
  if (maxLength !== undefined && (!Number.isInteger(maxLength) || (maxLength as number) < 1)) {
    return '"maxLength" must be a positive integer';
  }
  const limit = maxLength === undefined ? {} : { maxLength: maxLength as number };
  const fieldList = `one of ${CASE_FIELDS.join(', ')}`;
  switch (kind) {
    case 'field':
      return isCaseField(rule.field) ? { field: rule.field, ...limit } : `"field" must be ${fieldList}`;
    case 'firstOf':
    case 'join': {
      const fields = rule[kind];
      if (!Array.isArray(fields) || fields.length === 0) return `"${kind}" must be a non-empty array`;
      const bad = fields.find((field) => !isCaseField(field));
      if (bad !== undefined) return `"${kind}" names ${JSON.stringify(bad)}, which is not ${fieldList}`;
      if (kind === 'firstOf') return { firstOf: fields, ...limit };
      if (rule.separator !== undefined && typeof rule.separator !== 'string') {
        return '"separator" must be a string';
      }
      return {
        join: fields,
        ...(rule.separator === undefined ? {} : { separator: rule.separator }),
        ...limit,
      };
    }
    case 'const': {
      const value = rule.const;
      const ok = typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number';
      return ok ? { const: value } : '"const" must be a string, number or boolean';
    }
  }
}

/**
 * Validates a parsed mapping document. Keys starting with `$` are comments and skipped.
 *
 * @param source names the document in error messages (a file path, "shipped default").
 * @throws CaseMappingError naming the bad entry.
 * @example
 * parseCaseMapping({ Origin: { const: 'Web' } }, 'inline'); // { Origin: { const: 'Web' } }
 * parseCaseMapping({ Origin: { const: null } }, 'inline');
 * // throws: case mapping inline: entry "Origin": "const" must be a string, number or boolean
 */
export function parseCaseMapping(document: unknown, source: string): CaseMapping {
  if (!isObject(document)) {
    throw new CaseMappingError(`case mapping ${source}: must be a JSON object of Salesforce field to rule`);
  }
  const mapping: Record<string, MappingRule> = {};
  for (const [target, rule] of Object.entries(document)) {
    if (target.startsWith('$')) continue;
    if (!SALESFORCE_FIELD_PATTERN.test(target)) {
      throw new CaseMappingError(`case mapping ${source}: entry "${target}" is not a Salesforce field name`);
    }
    const parsed = parseRule(rule);
    if (typeof parsed === 'string') {
      throw new CaseMappingError(`case mapping ${source}: entry "${target}": ${parsed}`);
    }
    mapping[target] = parsed;
  }
  if (Object.keys(mapping).length === 0) throw new CaseMappingError(`case mapping ${source}: has no entries`);
  return mapping;
}

/**
 * Reads and validates a mapping file (CRM_CASE_MAPPING_FILE).
 *
 * @throws CaseMappingError when the file cannot be read, is not JSON or has a bad entry.
 * @example
 * const mapping = loadCaseMapping('./config/caseMapping.json');
 */
export function loadCaseMapping(path: string): CaseMapping {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new CaseMappingError(`case mapping ${path}: cannot be read (${code})`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new CaseMappingError(`case mapping ${path}: is not valid JSON (${(error as Error).message})`);
  }
  return parseCaseMapping(document, path);
}

/** The shipped default mapping (`caseMapping.json`), validated once at load. */
export const DEFAULT_CASE_MAPPING: CaseMapping = parseCaseMapping(shippedMapping, 'caseMapping.json');
