import type { PersonalValueKind } from './fieldClassification.ts';

/*
 * The patterns a personal value of a known shape is found by in a downstream's text (lib/privacy/redaction.ts):
 * any e-mail address, a phone number by its digits however grouped, a date of birth in the forms systems write it.
 */

/** A phone number is matched on its digits when at least this many remain (fewer would match unrelated numbers). */
export const MIN_PHONE_DIGITS = 6;

/** Characters that end an e-mail-like token: an address is redacted whole, whoever it belongs to. */
const TOKEN_END = String.raw`\s<>()"',;:[\]{}`;

/**
 * Any address: a token with something before and after `@` (or its URL- or JSON-escaped form). Tried only where
 * a token starts, so a long run without `@` is read once, not once per character (the old pattern was quadratic).
 */
export const EMAIL_PATTERN = String.raw`(?<![^${TOKEN_END}])[^${TOKEN_END}@]+(?:@|%40|\\u0040)[^${TOKEN_END}]+`;

/** Between the digits of a phone number: up to three of spaces, dashes, dots, slashes, parentheses. */
const PHONE_SEP = String.raw`[\s\-./()\\\u2010-\u2015]{0,3}`;

/** Between the parts of a date: `-`, `.`, `/`, a space, or a JSON-escaped slash. */
const DATE_SEP = String.raw`(?:[-./ ]|\\/)`;

const MONTHS = [
  'jan(?:uary)?',
  'feb(?:ruary)?',
  'mar(?:ch)?',
  'apr(?:il)?',
  'may',
  'june?',
  'july?',
  'aug(?:ust)?',
  'sep(?:t(?:ember)?)?',
  'oct(?:ober)?',
  'nov(?:ember)?',
  'dec(?:ember)?',
];

/** A timestamp `/Date(<ms>)/` of OData v2 (SAP), escaped slashes too; whether its day is a birthday is checked in code. */
export const ODATA_DATE = String.raw`\\?/Date\((?<odataMs>-?\d{1,16})(?:[+-]\d{4})?\)\\?/`;

/**
 * Patterns of a phone number's digits, however grouped, with or without a country code or trunk `0`.
 *
 * @example
 * new RegExp(phonePatterns('021 555 0199')[0]).test('+64 21-555-0199') // true
 */
export const phonePatterns = (value: string): string[] => {
  const digits = value.replace(/\D/g, '');
  const international = /^\s*(?:\+|00)/.test(value);
  const significant = international ? digits.replace(/^00/, '') : digits.replace(/^0+/, '');
  // An international number may come back in national form: without its (1 to 3 digit) country code.
  const cores = new Set([significant]);
  if (international) for (let cut = 1; cut <= 3; cut++) cores.add(significant.slice(cut).replace(/^0+/, ''));
  return [...cores]
    .filter((core) => core.length >= MIN_PHONE_DIGITS)
    .map((core) => {
      const body = [...core].join(PHONE_SEP);
      // Optionally preceded by a country code (`+64`, `0064`, `64`) and a trunk `0` or `(0)`; starting at a `+` or a
      // digit, so the separators before the number stay.
      return String.raw`(?<![0-9])(?:(?:\+${PHONE_SEP})?\d{1,4}${PHONE_SEP})?(?:0${PHONE_SEP})?${body}(?![0-9])`;
    });
};

export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

/**
 * A `YYYY-MM-DD` date that exists in the calendar, or undefined.
 *
 * @example
 * parseDate('1990-05-01') // { year: 1990, month: 5, day: 1 }
 * parseDate('1990-02-30') // undefined
 */
export const parseDate = (value: string): CalendarDate | undefined => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? { year, month, day } : undefined;
};

/**
 * Patterns of a date in the forms systems write it: `1990-05-01` (also the start of an ISO timestamp, which is
 * redacted with it), `19900501` (SAP's DATS, and its timestamps), `01.05.1990`, `01/05/1990`, `05/01/1990`,
 * two-digit years, leading zeros left out, and `1 May 1990` / `May 1st, 1990`.
 *
 * @example
 * datePatterns({ year: 1990, month: 5, day: 1 }).some((p) => new RegExp(p, 'i').test('born 01.05.1990')) // true
 */
export const datePatterns = ({ year, month, day }: CalendarDate): string[] => {
  const yyyy = String(year).padStart(4, '0');
  const years = `(?:${yyyy}|${yyyy.slice(2)})`;
  const two = (n: number) => String(n).padStart(2, '0');
  const loose = (n: number) => (n < 10 ? `0?${n}` : String(n));
  const [mm, dd] = [loose(month), loose(day)];
  const time = String.raw`(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?`;
  const ordinal = '(?:st|nd|rd|th)?';
  const monthName = MONTHS[month - 1];
  return [
    `(?<![0-9])${yyyy}${DATE_SEP}${mm}${DATE_SEP}${dd}${time}(?![0-9])`,
    String.raw`(?<![0-9])${yyyy}${two(month)}${two(day)}(?:\d{6}(?:[.,]\d+)?)?(?![0-9])`,
    `(?<![0-9])${dd}${DATE_SEP}${mm}${DATE_SEP}${years}(?![0-9])`,
    `(?<![0-9])${mm}${DATE_SEP}${dd}${DATE_SEP}${years}(?![0-9])`,
    String.raw`(?<![0-9])${dd}${ordinal}\.?\s*(?:of\s+)?${monthName}\.?,?\s*${yyyy}(?![0-9])`,
    String.raw`(?<![a-z])${monthName}\.?\s*${dd}${ordinal},?\s*${yyyy}(?![0-9])`,
  ];
};

/**
 * The kind of a bare string, read off its shape: a date, an e-mail address, a phone number, else text.
 *
 * @example
 * kindOf('+64 21 555 0199') // 'phone'
 */
export const kindOf = (value: string): PersonalValueKind => {
  if (parseDate(value)) return 'date';
  if (/^[^\s@]+@[^\s@]+$/.test(value)) return 'email';
  if (/^[+(]?[\d\s().\-/]+$/.test(value) && value.replace(/\D/g, '').length >= MIN_PHONE_DIGITS)
    return 'phone';
  return 'text';
};
