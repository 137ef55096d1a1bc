import schema from '../../schemas/caseRecord.schema.json' with { type: 'json' };
import type { CaseRecord } from '../types.ts';
import {
  checkCharacters,
  checkPostcodeNumber,
  checkSingleValue,
  parseBoolean,
  postcodeToString,
  trimAndDropBlanks,
} from './fieldRules.ts';
import validate from './generated/caseRecord.js';
import { describeErrors } from './messages.ts';
import type { Problem, ValidationResult } from './types.ts';

/** The fields a case carries; anything else a form posts (submit buttons, tracking fields) is ignored. */
const knownFields = Object.keys(schema.properties);
const booleanFields = ['privacyConsent', 'subscribeToBrand', 'ownBrand'];

const pickKnown = (body: Record<string, unknown>): Record<string, unknown> => {
  const picked: Record<string, unknown> = {};
  for (const field of knownFields) {
    if (Object.hasOwn(body, field)) picked[field] = body[field];
  }
  return picked;
};

/**
 * Validates a parsed `crm/case` body (JSON or form) and returns the normalised case, or every problem found.
 * `vin-frame` is folded into `frameNo`; both given and different is a problem.
 *
 * @example
 * const result = validateCaseRecord({ firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' });
 * // { ok: true, value: { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' } }
 */
export const validateCaseRecord = (body: unknown): ValidationResult<CaseRecord> => {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, problems: [{ rule: 'must be a single case object' }] };
  }
  const known = pickKnown(body as Record<string, unknown>);
  // Rules on the values as sent: one value per field (a form repeating a field gives an array, JSON may send
  // one), no control characters or U+FFFE/U+FFFF. A field refused here gets no second, schema-worded problem
  // ("must be a string").
  const own: Problem[] = [];
  for (const [field, value] of Object.entries(known)) {
    const rule = checkSingleValue(value) ?? checkCharacters(value);
    if (rule) own.push({ field, rule });
  }
  const prepared = trimAndDropBlanks(known);
  for (const field of booleanFields) {
    if (field in prepared) prepared[field] = parseBoolean(prepared[field]);
  }
  if ('addressPostcode' in prepared) {
    prepared.addressPostcode = postcodeToString(prepared.addressPostcode);
    const rule = own.some((p) => p.field === 'addressPostcode')
      ? undefined
      : checkPostcodeNumber(prepared.addressPostcode);
    if (rule) own.push({ field: 'addressPostcode', rule });
  }
  const refusedFields = new Set(own.map((p) => p.field));
  const problems: Problem[] = [
    ...(validate(prepared) ? [] : describeErrors(validate.errors ?? [], schema)).filter(
      (p) => p.field === undefined || !refusedFields.has(p.field),
    ),
    ...own,
  ];
  const { frameNo, 'vin-frame': vinFrame, ...rest } = prepared;
  if (frameNo !== undefined && vinFrame !== undefined && frameNo !== vinFrame) {
    problems.push({ field: 'vin-frame', rule: 'must match frameNo when both are given' });
  }
  if (problems.length > 0) return { ok: false, problems };
  const frame = frameNo ?? vinFrame;
  return {
    ok: true,
    value: (frame === undefined ? rest : { ...rest, frameNo: frame }) as unknown as CaseRecord,
  };
};
