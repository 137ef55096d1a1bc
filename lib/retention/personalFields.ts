import { keptFields } from '../privacy/fieldClassification.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';

/*
 * What of a normalised record is KEPT once its personal data is removed: the fields the one classification
 * (lib/privacy/fieldClassification.ts) classes `kept`. An allow-list, so that a field added to a schema later is
 * removed until someone decides it is not personal.
 */

/** What remains of a record of a kind without its personal data: only the kept fields it has. */
export type RecordWithoutPersonalData = Partial<SalesRegistration> | Partial<CaseRecord>;

/**
 * The record with only its kept fields; absent fields stay absent. A new object: the record given is not changed.
 *
 * @example
 * withoutPersonalData('caseRecord', { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com', frameNo: 'JH2X' })
 * // { frameNo: 'JH2X' }
 */
export const withoutPersonalData = (
  kind: RecordKind,
  record: SalesRegistration | CaseRecord | Record<string, unknown>,
): RecordWithoutPersonalData => {
  const kept: Record<string, unknown> = {};
  for (const field of keptFields(kind)) {
    const value = (record as Record<string, unknown>)[field];
    if (value !== undefined) kept[field] = value;
  }
  return kept as RecordWithoutPersonalData;
};
