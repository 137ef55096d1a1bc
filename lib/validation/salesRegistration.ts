import schema from '../../schemas/salesRegistration.schema.json' with { type: 'json' };
import { isObject } from '../json.ts';
import type { SalesRegistration } from '../types.ts';
import {
  checkCharacters,
  checkDateOfBirth,
  checkPostcodeNumber,
  checkSaleDate,
  normaliseCommPriv,
  normaliseSex,
  postcodeToString,
  trimAndDropBlanks,
} from './fieldRules.ts';
import { sortProblems } from './format.ts';
import validate from './generated/salesRegistration.js';
import { describeErrors } from './messages.ts';
import type { Problem, ValidationResult } from './types.ts';

/** Trimming, blank = missing and the value aliases, applied before the schema judges a record. */
const prepareRecord = (record: unknown): unknown => {
  if (!isObject(record)) return record;
  const prepared = trimAndDropBlanks(record);
  if ('CommPriv' in prepared) prepared.CommPriv = normaliseCommPriv(prepared.CommPriv);
  if ('Sex' in prepared) prepared.Sex = normaliseSex(prepared.Sex);
  if ('Postcode' in prepared) prepared.Postcode = postcodeToString(prepared.Postcode);
  return prepared;
};

/** The fields a record may carry. */
const knownFields = Object.keys(schema.items.properties);

/**
 * Rules of our own, on the values as sent and as prepared: no control characters in any known field (unknown
 * ones are refused anyway), and no Postcode number without a faithful string form.
 */
const ownProblems = (records: unknown[], prepared: unknown[]): Problem[] => {
  const problems: Problem[] = [];
  records.forEach((record, index) => {
    if (!isObject(record)) return;
    for (const field of knownFields) {
      const rule = Object.hasOwn(record, field) ? checkCharacters(record[field]) : undefined;
      if (rule) problems.push({ index, field, rule });
    }
    const postcode = (prepared[index] as Record<string, unknown>).Postcode;
    const postcodeRule = problems.some((p) => p.index === index && p.field === 'Postcode')
      ? undefined
      : checkPostcodeNumber(postcode);
    if (postcodeRule) problems.push({ index, field: 'Postcode', rule: postcodeRule });
  });
  return problems;
};

/** Date rules the schema cannot state, for the records whose dates already have the right form. */
const dateProblems = (records: unknown[], now: Date): Problem[] => {
  const problems: Problem[] = [];
  records.forEach((record, index) => {
    if (!isObject(record)) return;
    const { SaleDate, DOB } = record;
    const saleRule =
      typeof SaleDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(SaleDate) && checkSaleDate(SaleDate, now);
    if (saleRule) problems.push({ index, field: 'SaleDate', rule: saleRule });
    const dobRule = typeof DOB === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(DOB) && checkDateOfBirth(DOB, now);
    if (dobRule) problems.push({ index, field: 'DOB', rule: dobRule });
  });
  return problems;
};

/**
 * Validates a parsed `erp/sales_registration` body and returns the normalised records, or every problem found.
 *
 * @example
 * const result = validateSalesRegistrations(JSON.parse(body));
 * if (!result.ok) return badRequest(result.problems.map(formatProblem).join('; '));
 */
export const validateSalesRegistrations = (
  body: unknown,
  now = new Date(),
): ValidationResult<SalesRegistration[]> => {
  // Too many records: that alone is the answer. Judging each of up to 500,000 items of a 1 MiB body would cost
  // seconds of CPU for a list of problems that is cut to 50 anyway.
  if (Array.isArray(body) && body.length > schema.maxItems) {
    return { ok: false, problems: [{ rule: schema['x-messages'].maxItems }] };
  }
  const prepared = Array.isArray(body) ? body.map(prepareRecord) : body;
  const schemaValid = validate(prepared);
  let problems = schemaValid ? [] : describeErrors(validate.errors ?? [], schema);
  if (Array.isArray(body) && Array.isArray(prepared)) {
    // A field refused by a rule of our own gets no second, schema-worded problem ("must be a string or a number").
    const own = ownProblems(body, prepared);
    const refused = new Set(own.map((p) => `${p.index}|${p.field}`));
    problems = [
      ...problems.filter((p) => !refused.has(`${p.index}|${p.field}`)),
      ...own,
      ...dateProblems(prepared, now),
    ];
  }
  if (problems.length > 0) return { ok: false, problems: sortProblems(problems) };
  return { ok: true, value: prepared as SalesRegistration[] };
};
