import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';

/*
 * THE classification of every field of both record kinds: kept (not personal), or personal with the kind of value
 * it holds. It alone decides both what the downstream adapters blank out of error texts (lib/privacy/redaction.ts)
 * and what the purge keeps of a record (lib/retention); there is no other list. A field it does not name (a field
 * added to a schema and not yet decided about) is personal, as free text.
 *
 * Sales: kept are the dealer, the vehicle (frame number, model), the date of sale and the customer's yes/no
 * choices. Personal: names and company name (a sole trader's company names a person), street, floor, town, postcode
 * and state (with a frame number they locate a person), email, phone, DOB, sex; Operator (the dealer's staff member
 * who entered the sale: a person's name); RiderTraining, Finance, Promo and Cashback (free text of up to 255
 * characters, which may carry a name, a contract or a licence number).
 * Cases: kept are the customer's consents and choices, the site and origin of the case, and the frame number.
 * Personal: title, names, email, phones, postcode, and comments (free text written by the customer).
 */

/**
 * What a personal value is, which decides the forms it is looked for in (lib/privacy/redaction.ts): a `name`
 * also by each of its parts alone; an `email`, `phone` or `date` in the ways systems write them; `text` as a whole
 * (a long text by its first 120 characters); a `code` (a value from a short list: sex, title) as a whole word, and
 * when shorter than 3 characters only in its own case or upper case ('M' of Sex is not the 'm' of "5 m").
 */
export type PersonalValueKind = 'name' | 'email' | 'phone' | 'date' | 'text' | 'code';

/** A field's class: kept after the purge and left in error texts, or personal with its kind of value. */
export type FieldClass = 'kept' | PersonalValueKind;

/** Every field of a sales registration. Typed so that a field added to {@link SalesRegistration} must be classed. */
export const SALES_FIELD_CLASSES = {
  DealerId: 'kept',
  FrameNum: 'kept',
  Model: 'kept',
  SaleDate: 'kept',
  Name: 'name',
  Name2: 'name',
  CompanyName: 'name',
  Street: 'text',
  Floor: 'text',
  Town: 'text',
  Postcode: 'text',
  State: 'text',
  email: 'email',
  Phone: 'phone',
  CommPriv: 'kept',
  RiderTraining: 'text',
  MoreInfo: 'kept',
  AllowSharing: 'kept',
  Operator: 'name',
  Finance: 'text',
  Promo: 'text',
  Cashback: 'text',
  DOB: 'date',
  Sex: 'code',
} as const satisfies Record<keyof SalesRegistration, FieldClass>;

/** Every field of a case. Typed so that a field added to {@link CaseRecord} must be classed. */
export const CASE_FIELD_CLASSES = {
  title: 'code',
  firstName: 'name',
  surname: 'name',
  email: 'email',
  mobile: 'phone',
  homePhone: 'phone',
  addressPostcode: 'text',
  privacyConsent: 'kept',
  subscribeToBrand: 'kept',
  ownBrand: 'kept',
  siteName: 'kept',
  comments: 'text',
  origin: 'kept',
  frameNo: 'kept',
} as const satisfies Record<keyof CaseRecord, FieldClass>;

const CLASSES: Record<RecordKind, Readonly<Record<string, FieldClass>>> = {
  salesRegistration: SALES_FIELD_CLASSES,
  caseRecord: CASE_FIELD_CLASSES,
};

/**
 * The class of a field of a record kind; a field the classification does not name is personal free text.
 *
 * @example
 * fieldClass('salesRegistration', 'FrameNum') // 'kept'
 * fieldClass('caseRecord', 'licenceNumber') // 'text' (not classified: personal)
 */
export const fieldClass = (kind: RecordKind, field: string): FieldClass =>
  Object.hasOwn(CLASSES[kind], field) ? CLASSES[kind][field] : 'text';

/**
 * The fields of a kind that are kept after the purge, in the classification's order.
 *
 * @example
 * keptFields('caseRecord') // ['privacyConsent', 'subscribeToBrand', 'ownBrand', 'siteName', 'origin', 'frameNo']
 */
export const keptFields = (kind: RecordKind): string[] =>
  Object.entries(CLASSES[kind])
    .filter(([, fieldClassOf]) => fieldClassOf === 'kept')
    .map(([field]) => field);

/** A personal value of a record with its kind: what error texts are cleaned of. */
export interface PersonalValue {
  readonly kind: PersonalValueKind;
  readonly value: string;
}

/** The texts of a value of a field nobody classed: strings and numbers, at any depth. */
const textsOf = (value: unknown): string[] => {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' && Number.isFinite(value)) return [String(value)];
  if (Array.isArray(value)) return value.flatMap(textsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(textsOf);
  return [];
};

/**
 * Every personal value a record carries, with its kind: each field not classed `kept`, unclassified ones
 * included. Numbers count as text (a postcode may come as one); booleans say nothing of a person and are skipped.
 *
 * @example
 * personalValuesOf('caseRecord', { firstName: 'Ana', email: 'ana@example.com', frameNo: 'JH2X' });
 * // [{ kind: 'name', value: 'Ana' }, { kind: 'email', value: 'ana@example.com' }]
 */
export const personalValuesOf = (kind: RecordKind, record: object): PersonalValue[] =>
  Object.entries(record).flatMap(([field, value]) => {
    const fieldClassOf = fieldClass(kind, field);
    if (fieldClassOf === 'kept') return [];
    return textsOf(value).map((text) => ({ kind: fieldClassOf, value: text }));
  });
