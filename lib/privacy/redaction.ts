import type { PersonalValueKind } from './fieldClassification.ts';
import { agreement, isFlex, isWordAt, isWordBefore, textForms } from './valueForms.ts';
import {
  datePatterns,
  EMAIL_PATTERN,
  kindOf,
  ODATA_DATE,
  parseDate,
  phonePatterns,
} from './valuePatterns.ts';

/*
 * The redaction of downstream texts: what a downstream answers may echo the record's personal values, and is
 * stored, logged and published only through safeErrorText. The values come from the one classification
 * (lib/privacy/fieldClassification.ts personalValuesOf); their forms from valueForms.ts and valuePatterns.ts.
 */

/** Downstream error texts are cut to about this many characters before they are stored. */
export const MAX_ERROR_TEXT_LENGTH = 500;

const REDACTED = '[redacted]';

/**
 * How much of a downstream text is read at all. Redaction runs on this much and no more, so its cost does not
 * grow with the text (a gateway may answer megabytes); only the first MAX_ERROR_TEXT_LENGTH characters are kept.
 */
const WINDOW = 4 * MAX_ERROR_TEXT_LENGTH;

/**
 * When the text was cut at WINDOW, what comes from its last MARGIN characters is dropped after redaction: a
 * value cut in two there is no longer recognisable, and its first part must not reach the output even when
 * redaction and whitespace collapsing shrink what comes before it. Everything below is recognised within MARGIN
 * characters (a form longer than FORM_PREFIX by its first FORM_PREFIX characters).
 */
const MARGIN = 256;

/**
 * A form of a value longer than this counts as found when this much of it agrees with the text, and is redacted
 * as far as the text agrees with it: a long value (a street, a comment) may come back cut short.
 */
const FORM_PREFIX = 120;

/**
 * A personal value of a record, with its kind (lib/privacy/fieldClassification.ts: personalValuesOf), or a bare
 * string whose kind is read off its shape: `YYYY-MM-DD` is a date, `x@y` an e-mail address, digits with separators
 * a phone number, anything else text (a bare string is never split into words the way a `name` is).
 */
export type PersonalValue = string | { readonly kind: PersonalValueKind; readonly value: string };

/** How the record's personal values are found. */
interface Matcher {
  /** Every e-mail address, phone number and date of birth, in one pattern (its cost does not grow with the values). */
  pattern: RegExp;
  /** The text forms of the values by their first character (lower case), longest first. */
  formsByFirst: Map<string, string[]>;
  /** Days of birth as [first, last) milliseconds that an OData timestamp of that day may carry (any time zone). */
  birthdays: [number, number][];
  /** Short codes (under 3 characters: a sex 'M', a title 'Dr') as whole words in their own or upper case, or none. */
  codes: RegExp | undefined;
}

/** A code shorter than this is matched case-sensitively (its own case or upper case) and only as a whole word. */
const SHORT_CODE = 3;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const HOURS_14 = 14 * 3_600_000;

const matcherFor = (personalValues: readonly PersonalValue[]): Matcher => {
  const texts = new Set<string>();
  const patterns = [EMAIL_PATTERN];
  const birthdays: [number, number][] = [];
  const codes = new Set<string>();
  for (const entry of personalValues) {
    const value = (typeof entry === 'string' ? entry : entry.value).trim();
    if (!value) continue;
    const kind = typeof entry === 'string' ? kindOf(value) : entry.kind;
    if (kind === 'code' && value.length < SHORT_CODE) {
      // 'M' (Sex) or 'Ms' (title) in any case would blank out the 'm' of "5 m" and the 'ms' of "300 ms".
      for (const spelling of [value, value.toUpperCase()]) codes.add(escapeRegExp(spelling));
      continue;
    }
    texts.add(value);
    if (kind === 'name') {
      // A part of a double or multiple name may come back alone ("Ngata" of "Ngata-Whitfield").
      for (const part of value.split(/[\s\-\u2010-\u2015]+/)) if (part.length >= 2) texts.add(part);
    }
    if (kind === 'email') texts.add(value.replace('@', '%40'));
    if (kind === 'phone') patterns.push(...phonePatterns(value));
    const date = kind === 'date' ? parseDate(value) : undefined;
    if (date) {
      patterns.push(...datePatterns(date));
      const midnight = Date.UTC(date.year, date.month - 1, date.day);
      birthdays.push([midnight - HOURS_14, midnight + 86_400_000 + HOURS_14]);
    }
  }
  if (birthdays.length > 0) patterns.push(`(?<odata>${ODATA_DATE})`);
  const formsByFirst = new Map<string, string[]>();
  for (const text of texts) {
    // A value of only one or two digits or signs (a floor "3") identifies nobody and would blank out every "3".
    if (text.length < 3 && !/\p{L}/u.test(text)) continue;
    // No more of a value can agree with the text than the text that is read.
    for (const form of textForms(text.slice(0, WINDOW))) {
      const first = isFlex(form[0]) ? ' ' : form[0].toLowerCase();
      const forms = formsByFirst.get(first);
      if (forms) forms.push(form);
      else formsByFirst.set(first, [form]);
    }
  }
  // Longest first: where forms overlap ("Ann Lee" and "Ann"), the longer one is redacted whole.
  for (const forms of formsByFirst.values()) forms.sort((a, b) => b.length - a.length);
  const codePattern =
    codes.size > 0
      ? new RegExp(`(?<![\\p{L}\\p{N}])(?:${[...codes].join('|')})(?![\\p{L}\\p{N}])`, 'gu')
      : undefined;
  return { pattern: new RegExp(patterns.join('|'), 'gi'), formsByFirst, birthdays, codes: codePattern };
};

/** Stretches of the text to redact: [start, end). */
type Span = [number, number];

/** Where the patterns (e-mail addresses, phone numbers, dates of birth, short codes) match. */
const patternSpans = (text: string, { pattern, birthdays, codes }: Matcher): Span[] => {
  const spans: Span[] = [];
  if (codes) {
    codes.lastIndex = 0;
    for (let match = codes.exec(text); match; match = codes.exec(text)) {
      spans.push([match.index, match.index + match[0].length]);
    }
  }
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const odataMs = match.groups?.odataMs;
    // Another timestamp than one of the day of birth stays.
    const isBirthday =
      odataMs === undefined || birthdays.some(([from, to]) => +odataMs >= from && +odataMs < to);
    if (isBirthday) spans.push([match.index, match.index + match[0].length]);
    if (match[0].length === 0) pattern.lastIndex++;
  }
  return spans;
};

/**
 * Where the text forms of the values occur: whole words where they begin or end with a letter or digit ("Li"
 * never inside "Lisa"); a long form as far as it agrees. One pass over the text; at each position only the forms
 * that begin with its character are compared.
 */
const formSpans = (text: string, { formsByFirst }: Matcher): Span[] => {
  const spans: Span[] = [];
  for (let at = 0; at < text.length; ) {
    const forms = formsByFirst.get(isFlex(text[at]) ? ' ' : text[at].toLowerCase());
    let end = at;
    for (const form of forms ?? []) {
      if (isWordAt(form, 0) && isWordBefore(text, at)) break; // true for every form here: same first character
      const found = agreement(text, at, form);
      const whole =
        found.agreed === form.length &&
        !(isWordBefore(form, form.length) && found.end < text.length && isWordAt(text, found.end));
      if (whole || (form.length > FORM_PREFIX && found.agreed >= FORM_PREFIX)) end = Math.max(end, found.end);
      if (whole) break; // the longest whole form at this position
    }
    if (end > at) {
      spans.push([at, end]);
      at = end;
    } else at++;
  }
  return spans;
};

/**
 * Makes a downstream message safe to store and log. Every e-mail address and every personal value of the record
 * is replaced by `[redacted]`, in any form a downstream may echo it: any case; names as whole words of any
 * length ("Li" goes, "Lisa" stays); a code under 3 characters (sex, title) as a whole word in its own or upper
 * case only ("M" goes, the "m" of "5 m" stays); phone numbers by their digits however grouped, with or without country code;
 * dates of birth as `YYYY-MM-DD`, `DD.MM.YYYY`, `DD/MM/YYYY`, `MM/DD/YYYY`, `YYYYMMDD`, ISO timestamps and OData
 * `/Date(<ms>)/`; without accents; JSON-escaped (`\u00e9`, `\/`). Whitespace is collapsed and the text is cut to
 * MAX_ERROR_TEXT_LENGTH (500) characters, ending in `…` when cut.
 *
 * Its cost is bounded by the values and not by the text: only the first 2,000 characters are read (and what comes
 * from their last 256 is dropped, so that a value cut in two there cannot leave a recognisable part), in one pass.
 *
 * @param personalValues the record's personal values, with their kinds (a bare string's kind is read off its shape)
 * @example
 * safeErrorText('E-mail ann@example.com of Ann Lee (born 01.05.1990, +64 21 555 0199) is invalid', [
 *   { kind: 'name', value: 'Ann' },
 *   { kind: 'name', value: 'Lee' },
 *   { kind: 'date', value: '1990-05-01' },
 *   { kind: 'phone', value: '021 555 0199' },
 * ]);
 * // 'E-mail [redacted] of [redacted] [redacted] (born [redacted], [redacted]) is invalid'
 */
export function safeErrorText(text: string, personalValues: readonly PersonalValue[]): string {
  const cut = text.length > WINDOW;
  const window = cut ? text.slice(0, WINDOW) : text;
  const keepBefore = cut ? WINDOW - MARGIN : window.length;
  const matcher = matcherFor(personalValues);
  const spans = [...patternSpans(window, matcher), ...formSpans(window, matcher)].sort((a, b) => a[0] - b[0]);
  let kept = '';
  let from = 0;
  for (const [start, end] of spans) {
    if (start >= keepBefore) break;
    if (end <= from) continue; // inside a stretch already redacted
    // Overlapping stretches make one redaction.
    if (start >= from) kept += `${window.slice(from, start)}${REDACTED}`;
    from = end;
  }
  if (from < keepBefore) kept += window.slice(from, keepBefore);
  const safe = kept.replace(/\s+/g, ' ').trim();
  if (!cut && safe.length <= MAX_ERROR_TEXT_LENGTH) return safe;
  let end = Math.min(safe.length, MAX_ERROR_TEXT_LENGTH - 1);
  if (/[\uD800-\uDBFF]/.test(safe[end - 1] ?? '')) end -= 1;
  return `${safe.slice(0, end)}…`;
}
