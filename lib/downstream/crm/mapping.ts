import type { CaseRecord } from '../../types.ts';
import type { CaseField, CaseMapping, MappingRule } from './types.ts';

type SalesforceValue = string | number | boolean;

/** Absent means missing, or an empty string (a form field left blank): both stay out of the body. */
const presentValue = (record: CaseRecord, field: CaseField): SalesforceValue | undefined => {
  const value = record[field];
  return value === undefined || value === '' ? undefined : value;
};

const apply = (record: CaseRecord, rule: MappingRule): SalesforceValue | undefined => {
  if ('const' in rule) return rule.const;
  const value = select(record, rule);
  return typeof value === 'string' && rule.maxLength !== undefined ? cut(value, rule.maxLength) : value;
};

/** Cuts to `maxLength` UTF-16 units (as Salesforce counts), never between the halves of an emoji. */
const cut = (value: string, maxLength: number): string => {
  if (value.length <= maxLength) return value;
  const end = /[\uD800-\uDBFF]/.test(value[maxLength - 1]) ? maxLength - 1 : maxLength;
  return value.slice(0, end);
};

const select = (
  record: CaseRecord,
  rule: Exclude<MappingRule, { const: unknown }>,
): SalesforceValue | undefined => {
  if ('field' in rule) return presentValue(record, rule.field);
  if ('firstOf' in rule) {
    for (const field of rule.firstOf) {
      const value = presentValue(record, field);
      if (value !== undefined) return value;
    }
    return undefined;
  }
  const parts = rule.join.map((field) => presentValue(record, field)).filter((value) => value !== undefined);
  return parts.length > 0 ? parts.join(rule.separator ?? ' ') : undefined;
};

/**
 * Builds the Salesforce Case body of a case from a mapping; fields whose rule finds nothing are left out.
 *
 * @example
 * mapCase({ firstName: 'Ann', surname: 'Lee', email: 'ann@example.com', homePhone: '0299' }, DEFAULT_CASE_MAPPING);
 * // { SuppliedName: 'Ann Lee', SuppliedEmail: 'ann@example.com', SuppliedPhone: '0299', Origin: 'Web', … }
 */
export function mapCase(record: CaseRecord, mapping: CaseMapping): Record<string, SalesforceValue> {
  const body: Record<string, SalesforceValue> = {};
  for (const [target, rule] of Object.entries(mapping)) {
    const value = apply(record, rule);
    if (value !== undefined) body[target] = value;
  }
  return body;
}
