import type { PersonalValueKind } from '../privacy/fieldClassification.ts';
import { MAX_ERROR_TEXT_LENGTH } from './constants.ts';

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

/** A phone number is matched on its digits when at least this many remain (fewer would match unrelated numbers). */
const MIN_PHONE_DIGITS = 6;

/**
 * A personal value of a record, with its kind (lib/privacy/fieldClassification.ts: personalValuesOf), or a bare
 * string whose kind is read off its shape: `YYYY-MM-DD` is a date, `x@y` an e-mail address, digits with separators
 * a phone number, anything else text (a bare string is never split into words the way a `name` is).
 */
export type PersonalValue = string | { readonly kind: PersonalValueKind; readonly value: string };

/** Characters that end an e-mail-like token: an address is redacted whole, whoever it belongs to. */
const TOKEN_END = String.raw`\s<>()"',;:[\]{}`;

/**
 * Any address: a token with something before and after `@` (or its URL- or JSON-escaped form). Tried only where
 * a token starts, so a long run without `@` is read once, not once per character (the old pattern was quadratic).
 */
const EMAIL_PATTERN = String.raw`(?<![^${TOKEN_END}])[^${TOKEN_END}@]+(?:@|%40|\\u0040)[^${TOKEN_END}]+`;

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
const ODATA_DATE = String.raw`\\?/Date\((?<odataMs>-?\d{1,16})(?:[+-]\d{4})?\)\\?/`;

/** Letters written without their accents or as ASCII (SAP systems often transliterate). */
const TRANSLITERATIONS: Record<string, string> = {
  ä: 'ae',
  ö: 'oe',
  ü: 'ue',
  Ä: 'Ae',
  Ö: 'Oe',
  Ü: 'Ue',
  ß: 'ss',
  ø: 'o',
  Ø: 'O',
  æ: 'ae',
  Æ: 'Ae',
  œ: 'oe',
  Œ: 'Oe',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  þ: 'th',
  Þ: 'Th',
  ð: 'd',
};

/** Letters, digits and combining marks continue a word; anything else ends it. */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/** Whitespace and hyphens of a value agree with any run of them ("Ngata-Whitfield", "Ngata  Whitfield"). */
const FLEX_CHAR = /[\s\-\u2010-\u2015]/;

const isFlex = (char: string | undefined): boolean => char !== undefined && FLEX_CHAR.test(char);

/** Whether the code point that starts at `index` is a word character. */
const isWordAt = (text: string, index: number): boolean => {
  const point = text.codePointAt(index);
  return point !== undefined && WORD_CHAR.test(String.fromCodePoint(point));
};

/** Whether the code point that ends just before `index` is a word character. */
const isWordBefore = (text: string, index: number): boolean => {
  if (index <= 0) return false;
  const low = text.charCodeAt(index - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && index >= 2 ? index - 2 : index - 1;
  return isWordAt(text, start);
};

const sameLetter = (a: string, b: string): boolean => a === b || a.toLowerCase() === b.toLowerCase();

const stripMarks = (value: string): string =>
  value
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC');

const transliterate = (value: string): string =>
  stripMarks(value.replace(/[äöüÄÖÜßøØæÆœŒłŁđĐþÞð]/g, (char) => TRANSLITERATIONS[char] ?? char));

/** A JSON string's content: quotes, backslashes and control characters escaped; optionally more. */
const jsonEscaped = (value: string, { unicode = false, slash = false } = {}): string => {
  let escaped = JSON.stringify(value).slice(1, -1);
  if (unicode) {
    escaped = escaped.replace(
      /[^\x20-\x7e]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  return slash ? escaped.replaceAll('/', '\\/') : escaped;
};

/**
 * Every way a downstream may write a text value back: as is, composed or decomposed, without accents or
 * transliterated, and JSON-escaped (`\u00e9`, `\/`, `\"`), once or twice (a JSON text inside a JSON string).
 * Case does not matter when comparing, except inside escapes: `\u00cb` (Ë) is no other case of `\u00eb` (ë),
 * so the upper and lower case spellings are escaped too. Forms that differ only in case are kept once.
 */
const textForms = (value: string): string[] => {
  const forms = new Map<string, string>();
  const add = (form: string) => forms.set(form.toLowerCase(), form);
  for (const cased of new Set([value, value.toUpperCase(), value.toLowerCase()])) {
    for (const spelling of new Set([
      cased,
      cased.normalize('NFC'),
      cased.normalize('NFD'),
      stripMarks(cased),
      transliterate(cased),
    ])) {
      add(spelling);
      for (const unicode of [false, true]) {
        for (const slash of [false, true]) {
          const once = jsonEscaped(spelling, { unicode, slash });
          add(once);
          add(jsonEscaped(once));
        }
      }
    }
  }
  return [...forms.values()];
};

/**
 * Where the text from `start` stops agreeing with `form` (any case; a run of whitespace or hyphens agrees with
 * any such run), and how much of the form agreed.
 */
const agreement = (text: string, start: number, form: string): { end: number; agreed: number } => {
  let i = start;
  let j = 0;
  while (i < text.length && j < form.length) {
    if (isFlex(form[j])) {
      if (!isFlex(text[i])) break;
      while (isFlex(form[j])) j++;
      while (isFlex(text[i])) i++;
    } else if (sameLetter(text[i], form[j])) {
      i++;
      j++;
    } else break;
  }
  return { end: i, agreed: j };
};

/** Patterns of a phone number's digits, however grouped, with or without a country code or trunk `0`. */
const phonePatterns = (value: string): string[] => {
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

interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

const parseDate = (value: string): CalendarDate | undefined => {
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
 */
const datePatterns = ({ year, month, day }: CalendarDate): string[] => {
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

const kindOf = (value: string): PersonalValueKind => {
  if (parseDate(value)) return 'date';
  if (/^[^\s@]+@[^\s@]+$/.test(value)) return 'email';
  if (/^[+(]?[\d\s().\-/]+$/.test(value) && value.replace(/\D/g, '').length >= MIN_PHONE_DIGITS)
    return 'phone';
  return 'text';
};

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

/**
 * Describes why `fetch` threw, without the request (which carries personal data).
 *
 * @example
 * describeFetchError(new DOMException('late', 'TimeoutError'), 10_000);
 * // { timedOut: true, text: 'timed out after 10000 ms' }
 */
export function describeFetchError(error: unknown, timeoutMs: number): { timedOut: boolean; text: string } {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return { timedOut: true, text: `timed out after ${timeoutMs} ms` };
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  // System codes (ECONNREFUSED, ECONNRESET, ENOTFOUND) say it all; undici's own codes (UND_ERR_SOCKET)
  // say less than their message ("other side closed").
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const detail =
    (code && /^E[A-Z]+$/.test(code) && code) ||
    (typeof cause?.message === 'string' && cause.message) ||
    code ||
    (error instanceof Error ? error.message : String(error));
  return { timedOut: false, text: `network error: ${detail}` };
}
