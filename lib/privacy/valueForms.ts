/*
 * How a downstream may write a text value back (any case, composed or decomposed, without accents, transliterated,
 * JSON-escaped) and how far a text agrees with one of those forms (lib/privacy/redaction.ts).
 */

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

/**
 * Whether a character is whitespace or a hyphen (any run of them agrees with any other run).
 *
 * @example
 * isFlex('-') // true
 */
export const isFlex = (char: string | undefined): boolean => char !== undefined && FLEX_CHAR.test(char);

/**
 * Whether the code point that starts at `index` is a word character.
 *
 * @example
 * isWordAt('Li Lee', 2) // false
 */
export const isWordAt = (text: string, index: number): boolean => {
  const point = text.codePointAt(index);
  return point !== undefined && WORD_CHAR.test(String.fromCodePoint(point));
};

/**
 * Whether the code point that ends just before `index` is a word character.
 *
 * @example
 * isWordBefore('Lisa', 2) // true
 */
export const isWordBefore = (text: string, index: number): boolean => {
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
 *
 * @example
 * textForms('Zoë').includes('Zoe') // true
 */
export const textForms = (value: string): string[] => {
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
 *
 * @example
 * agreement('Ngata  Whitfield!', 0, 'ngata-whitfield') // { end: 16, agreed: 15 }
 */
export const agreement = (text: string, start: number, form: string): { end: number; agreed: number } => {
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
