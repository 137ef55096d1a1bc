import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';

/*
 * What of a normalised record is KEPT once its personal data is removed: an allow-list, so that a field added to a
 * schema later is removed until someone decides it is not personal.
 *
 * Sales: the dealer, the vehicle (frame number, model), the date of sale and the customer's yes/no choices. Removed:
 * names and company name (a sole trader's company names a person), street, floor, town, postcode and state (with a
 * frame number they locate a person), email, phone, DOB, sex; Operator (the dealer's staff member who entered the
 * sale: a person's name); RiderTraining, Finance, Promo and Cashback (free text of up to 255 characters, which may
 * carry a name, a contract or a licence number).
 * Cases: the customer's consents and choices, the site and origin of the case, and the frame number. Removed: title,
 * names, email, phones, postcode, and comments (free text written by the customer).
 */

/** The fields of a sales registration kept after its personal data is removed. */
export const KEPT_SALES_FIELDS = [
  'DealerId',
  'FrameNum',
  'Model',
  'SaleDate',
  'CommPriv',
  'MoreInfo',
  'AllowSharing',
] as const satisfies readonly (keyof SalesRegistration)[];

/** The fields of a case kept after its personal data is removed. */
export const KEPT_CASE_FIELDS = [
  'privacyConsent',
  'subscribeToBrand',
  'ownBrand',
  'siteName',
  'origin',
  'frameNo',
] as const satisfies readonly (keyof CaseRecord)[];

const KEPT: Record<RecordKind, readonly string[]> = {
  salesRegistration: KEPT_SALES_FIELDS,
  caseRecord: KEPT_CASE_FIELDS,
};

/** What remains of a record of a kind without its personal data: only the kept fields it has. */
export type RecordWithoutPersonalData = Partial<SalesRegistration> | Partial<CaseRecord>;

/**
 * The record with only its kept fields (see {@link KEPT_SALES_FIELDS}, {@link KEPT_CASE_FIELDS}); absent fields stay
 * absent. A new object: the record given is not changed.
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
  for (const field of KEPT[kind]) {
    const value = (record as Record<string, unknown>)[field];
    if (value !== undefined) kept[field] = value;
  }
  return kept as RecordWithoutPersonalData;
};
