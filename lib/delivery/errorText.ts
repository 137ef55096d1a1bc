import { MAX_ERROR_TEXT_LENGTH } from './constants.ts';

const REDACTED = '[redacted]';

/**
 * How much of a downstream text is read at all. Redaction runs on this much and no more, so its cost does not
 * grow with the text (a gateway may answer megabytes); only the first MAX_ERROR_TEXT_LENGTH characters are kept.
 */
const WINDOW = 4 * MAX_ERROR_TEXT_LENGTH;

/**
 * When the text was cut at WINDOW, what comes from its last MARGIN characters is dropped after redaction: a
 * value cut in two by the window is no longer recognisable, and its first part must not reach the output even
 * when redaction and whitespace collapsing shrink what comes before it. Every pattern below matches within
 * MARGIN characters (longer values are matched by their first FORM_PREFIX characters, then extended).
 */
const MARGIN = 256;

/** Forms of a value longer than this are found by their start and redacted as far as the text agrees with them. */
const FORM_PREFIX = 120;

/** A phone number is matched on its digits when at least this many remain (fewer would match unrelated numbers). */
const MIN_PHONE_DIGITS = 6;

/** What a personal value is, which decides the forms it is looked for in. */
export type PersonalValueKind = 'name' | 'email' | 'phone' | 'date' | 'text';

/**
 * A personal value of a record, with its kind, or a bare string whose kind is read off its shape: `YYYY-MM-DD`
 * is a date, `x@y` an e-mail address, digits with separators a phone number, anything else text (a bare string
 * is never split into words the way a `name` is).
 */
export type PersonalValue = string | { readonly kind: PersonalValueKind; readonly value: string };

/** Characters that end an e-mail-like token: an address is redacted whole, whoever it belongs to. */
const TOKEN_END = String.raw`\s<>()"',;:[\]{}`;

/** Any address: a token with something before and after `@` (or its URL- or JSON-escaped form). */
const EMAIL_PATTERN = String.raw`(?<![^${TOKEN_END}])[^${TOKEN_END}@]+(?:@|%40|\\u0040)[^${TOKEN_END}]+`;

/** A word boundary for names and other text: letters, digits and combining marks continue a word. */
const WORD = String.raw`[\p{L}\p{N}\p{M}]`;

/** Whitespace and hyphens of a value match any run of them ("Ngata-Whitfield", "Ngata Whitfield"). */
const FLEX = String.raw`[\s\-\u2010-\u2015]+`;
const isFlex = (char: string): boolean => /[\s\-\u2010-\u2015]/.test(char);

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

/** A timestamp `/Date(<ms>)/` of OData v2 (SAP), escaped slashes too; its day is checked in code. */
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

/** Escapes what a `u`-flag pattern reads as syntax (and nothing else: needless escapes are errors there). */
const escapeRegExp = (value: string): string => value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const stripMarks = (value: string): string => value.normalize('NFD').replace(/\p{M}+/gu, '').normalize('NFC');

const transliterate = (value: string): string =>
  stripMarks(value.replace(/[äöüÄÖÜßøØæÆœŒłŁđĐþÞð]/g, (char) => TRANSLITERATIONS[char] ?? char));

/** A JSON string's content: quotes, backslashes and control characters escaped; optionally more. */
const jsonEscaped = (value: string, { unicode = false, slash = false } = {}): string => {
  let escaped = JSON.stringify(value).slice(1, -1);
  if (unicode) {
    escaped = escaped.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  return slash ? escaped.replaceAll('/', '\\/') : escaped;
};

/**
 * Every way a downstream may write a text value back: as is, composed or decomposed, without accents or
 * transliterated, and JSON-escaped (`\u00e9`, `\/`, `\"`), once or twice (a JSON text inside a JSON string).
 * Case is left to the pattern's `i` flag, except inside escapes: `\u00cb` (Ë) is no other case of `\u00eb` (ë),
 * so the upper and lower case spellings are escaped too. Forms that differ only in case are kept once.
 */
const textForms = (value: string): string[] => {
  const forms = new Map<string, string>();
  const add = (form: string) => forms.set(form.toLowerCase(), form);
  for (const cased of [value, value.toUpperCase(), value.toLowerCase()]) {
    for (const spelling of [cased, cased.normalize('NFC'), cased.normalize('NFD'), stripMarks(cased), transliterate(cased)]) {
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

/** The pattern of one text form, whole words only so that "Li" never eats into "Lisa". */
const formPattern = (form: string, whole = true): string => {
  let pattern = '';
  for (let i = 0; i < form.length; ) {
    if (isFlex(form[i])) {
      while (i < form.length && isFlex(form[i])) i++;
      pattern += FLEX;
    } else {
      const char = String.fromCodePoint(form.codePointAt(i) ?? 0);
      pattern += escapeRegExp(char);
      i += char.length;
    }
  }
  const first = form.codePointAt(0) ?? 0;
  const last = form.codePointAt(form.length - 1) ?? 0;
  const before = /[\p{L}\p{N}]/u.test(String.fromCodePoint(first)) ? `(?<!${WORD})` : '';
  const after = whole && /[\p{L}\p{N}]/u.test(String.fromCodePoint(last)) ? `(?!${WORD})` : '';
  return before + pattern + after;
};

/** The first FORM_PREFIX characters of a long form, not ending inside a surrogate pair. */
const prefixOf = (form: string): string => {
  const end = /[\uD800-\uDBFF]/.test(form[FORM_PREFIX - 1]) ? FORM_PREFIX - 1 : FORM_PREFIX;
  return form.slice(0, end);
};

/** How many characters of `text` from `start` agree with `form` (any case, whitespace and hyphen runs alike). */
const agreement = (text: string, start: number, form: string): number => {
  let i = start;
  let j = 0;
  while (i < text.length && j < form.length) {
    if (isFlex(form[j])) {
      if (!isFlex(text[i])) break;
      while (j < form.length && isFlex(form[j])) j++;
      while (i < text.length && isFlex(text[i])) i++;
    } else if (text[i] === form[j] || text[i].toLowerCase() === form[j].toLowerCase()) {
      i++;
      j++;
    } else break;
  }
  return i - start;
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
      // Optionally preceded by a country code (`+64`, `0064`, `64`) and a trunk `0` or `(0)`.
      return String.raw`(?<!\p{N})(?:\+?${PHONE_SEP}\d{1,4}${PHONE_SEP})?(?:0${PHONE_SEP})?${body}(?!\p{N})`;
    });
};

interface DateOfBirth {
  year: number;
  month: number;
  day: number;
}

const parseDate = (value: string): DateOfBirth | undefined => {
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
const datePatterns = ({ year, month, day }: DateOfBirth): string[] => {
  const yyyy = String(year).padStart(4, '0');
  const years = `(?:${yyyy}|${yyyy.slice(2)})`;
  const two = (n: number) => String(n).padStart(2, '0');
  const loose = (n: number) => (n < 10 ? `0?${n}` : String(n));
  const [mm, dd] = [loose(month), loose(day)];
  const time = String.raw`(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?`;
  const ordinal = '(?:st|nd|rd|th)?';
  const monthName = MONTHS[month - 1];
  return [
    String.raw`(?<!\p{N})${yyyy}${DATE_SEP}${mm}${DATE_SEP}${dd}${time}(?!\p{N})`,
    String.raw`(?<!\p{N})${yyyy}${two(month)}${two(day)}(?:\d{6}(?:[.,]\d+)?)?(?!\p{N})`,
    String.raw`(?<!\p{N})${dd}${DATE_SEP}${mm}${DATE_SEP}${years}(?!\p{N})`,
    String.raw`(?<!\p{N})${mm}${DATE_SEP}${dd}${DATE_SEP}${years}(?!\p{N})`,
    String.raw`(?<!\p{N})${dd}${ordinal}\.?\s*(?:of\s+)?${monthName}\.?,?\s*${yyyy}(?!\p{N})`,
    String.raw`(?<!${WORD})${monthName}\.?\s*${dd}${ordinal},?\s*${yyyy}(?!\p{N})`,
  ];
};

const kindOf = (value: string): PersonalValueKind => {
  if (parseDate(value)) return 'date';
  if (/^[^\s@]+@[^\s@]+$/.test(value)) return 'email';
  if (/^[+(]?[\d\s().\-/]+$/.test(value) && value.replace(/\D/g, '').length >= MIN_PHONE_DIGITS) return 'phone';
  return 'text';
};

/** The single pattern that finds every personal value and e-mail address, and what it needs to check matches. */
interface Matcher {
  pattern: RegExp;
  /** Long forms, matched by their prefix and extended in code. */
  longForms: string[];
  /** Days of birth as [first, last] milliseconds that an OData timestamp of that day may carry. */
  birthdays: [number, number][];
}

const HOURS_14 = 14 * 3_600_000;

const buildMatcher = (personalValues: readonly PersonalValue[]): Matcher => {
  const texts = new Set<string>();
  const patterns: string[] = [];
  const birthdays: [number, number][] = [];
  for (const entry of personalValues) {
    const value = (typeof entry === 'string' ? entry : entry.value).trim();
    if (!value) continue;
    const kind = typeof entry === 'string' ? kindOf(value) : entry.kind;
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
  const shortForms = new Set<string>();
  const longForms = new Set<string>();
  for (const text of texts) {
    // A value of only one or two digits or signs (a floor "3") identifies nobody and would blank out every "3".
    if (text.length < 3 && !/\p{L}/u.test(text)) continue;
    for (const form of textForms(text)) (form.length > FORM_PREFIX ? longForms : shortForms).add(form);
  }
  const byLength = (a: string, b: string) => b.length - a.length;
  const alternatives = [
    `(?<email>${EMAIL_PATTERN})`,
    ...(birthdays.length > 0 ? [`(?<odata>${ODATA_DATE})`] : []),
    ...(longForms.size > 0
      ? [`(?<long>${[...longForms].sort(byLength).map((form) => formPattern(prefixOf(form), false)).join('|')})`]
      : []),
    ...patterns,
    // Longest first: where forms overlap ("Ann Lee" and "Ann"), the longer one is redacted whole.
    ...[...shortForms].sort(byLength).map((form) => formPattern(form)),
  ];
  return { pattern: new RegExp(alternatives.join('|'), 'giu'), longForms: [...longForms], birthdays };
};

/**
 * Makes a downstream message safe to store and log. Every e-mail address and every personal value of the record
 * is replaced by `[redacted]`, in any form a downstream may echo it: any case; names as whole words of any
 * length ("Li" goes, "Lisa" stays); phone numbers by their digits however grouped, with or without country code;
 * dates of birth as `YYYY-MM-DD`, `DD.MM.YYYY`, `DD/MM/YYYY`, `MM/DD/YYYY`, `YYYYMMDD`, ISO timestamps and OData
 * `/Date(<ms>)/`; accents left out; JSON-escaped (`\u00e9`, `\/`). Whitespace is collapsed and the text is cut to
 * MAX_ERROR_TEXT_LENGTH (500) characters, ending in `…` when cut.
 *
 * The cost is bounded by the values and not by the text: only its first 2,000 characters are read (what comes
 * from their last 256 is dropped, so that a value cut in two there cannot leave a recognisable part), and one
 * pattern finds everything in a single pass.
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
  const { pattern, longForms, birthdays } = buildMatcher(personalValues);
  let kept = '';
  let from = 0;
  for (let match = pattern.exec(window); match; match = pattern.exec(window)) {
    const start = match.index;
    if (start >= keepBefore) break;
    const groups = match.groups ?? {};
    if (groups.odata !== undefined) {
      const ms = Number(groups.odataMs);
      // Another timestamp than the date of birth stays (its text is copied on with what follows).
      if (!birthdays.some(([first, last]) => ms >= first && ms < last)) continue;
    }
    let end = start + match[0].length;
    if (groups.long !== undefined) {
      for (const form of longForms) end = Math.max(end, start + agreement(window, start, form));
    }
    kept += `${window.slice(from, start)}${REDACTED}`;
    from = end;
    pattern.lastIndex = Math.max(end, start + 1);
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
