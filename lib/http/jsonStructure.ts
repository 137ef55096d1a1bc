import { nameForMessage } from '../validation/format.ts';

export interface JsonStructureLimits {
  /** Most levels of objects and arrays inside one another; the top-level value is level 1. */
  maxDepth: number;
  /** Keys refused wherever they appear (prototype pollution). */
  forbiddenKeys: ReadonlySet<string>;
}

/** One open object or array, with where the scan is inside it. */
type Frame =
  | { kind: 'object'; keys: Set<string>; key?: string; expectKey: boolean }
  | { kind: 'array'; index: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The string is not closed: the text is malformed, which JSON.parse reports. */
const UNTERMINATED = -1;
/** A `\uD800`-`\uDFFF` escape without its partner: text that no UTF-8 encoding can carry. */
const LONE_SURROGATE = -2;

const hexUnit = (text: string, at: number): number => Number(`0x${text.slice(at, at + 4)}`);
const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Index just after the string starting with the quote at `start`, or UNTERMINATED / LONE_SURROGATE. */
const scanString = (text: string, start: number): number => {
  const end = text.length;
  let i = start + 1;
  while (i < end) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i + 1;
    if (code !== BACKSLASH) {
      i++;
      continue;
    }
    if (text.charCodeAt(i + 1) !== LETTER_U) {
      i += 2;
      continue;
    }
    const unit = hexUnit(text, i + 2);
    if (isLow(unit)) return LONE_SURROGATE;
    if (!isHigh(unit)) {
      i += 6;
      continue;
    }
    const pairedWithLow =
      text.charCodeAt(i + 6) === BACKSLASH &&
      text.charCodeAt(i + 7) === LETTER_U &&
      isLow(hexUnit(text, i + 8));
    if (!pairedWithLow) return LONE_SURROGATE;
    i += 12;
  }
  return UNTERMINATED;
};

/** `[0].email`, `email`, `extra.a`: where a key sits, names cut short for the answer. */
const pathOf = (stack: Frame[], key: string): string => {
  let path = '';
  for (let depth = 0; depth < stack.length - 1; depth++) {
    const frame = stack[depth];
    if (frame.kind === 'array') path += `[${frame.index}]`;
    else path += `${path ? '.' : ''}${nameForMessage(frame.key ?? '')}`;
  }
  return `${path}${path ? '.' : ''}${nameForMessage(key)}`;
};

/**
 * Checks the raw text of a JSON body for what `JSON.parse` would silently accept or what could hurt the code
 * after it, in one linear pass without recursion (a 1 MiB body takes a few milliseconds):
 *
 * - a key given twice in one object (`JSON.parse` keeps the last, so the caller and we would disagree on the
 *   record): `[0].email is given more than once`;
 * - objects and arrays nested deeper than `maxDepth`: `body is nested deeper than 32 levels`, before any
 *   recursive code (a reviver, a validator, a serialiser) meets them;
 * - a forbidden key such as `__proto__` at any depth: `body contains the forbidden key "__proto__"`;
 * - a `\uD800`-`\uDFFF` escape without its partner (a lone surrogate has no UTF-8 form):
 *   `body is not valid UTF-8`.
 *
 * Malformed JSON is not judged here: the scan stops or passes and `JSON.parse` reports it.
 *
 * @returns the reason to refuse the body, or undefined.
 * @example
 * checkJsonStructure('[{"email":"a@b.c","email":"d@e.f"}]', { maxDepth: 32, forbiddenKeys: new Set(['__proto__']) })
 * // '[0].email is given more than once'
 */
export const checkJsonStructure = (text: string, limits: JsonStructureLimits): string | undefined => {
  const stack: Frame[] = [];
  const end = text.length;
  let i = 0;
  while (i < end) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const after = scanString(text, i);
      if (after === LONE_SURROGATE) return 'body is not valid UTF-8';
      if (after === UNTERMINATED) return undefined;
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectKey) {
        const raw = text.slice(i + 1, after - 1);
        let key = raw;
        if (raw.includes('\\')) {
          try {
            key = JSON.parse(text.slice(i, after)) as string;
          } catch {
            return undefined; // an invalid escape: malformed JSON
          }
        }
        if (limits.forbiddenKeys.has(key)) return `body contains the forbidden key "${key}"`;
        if (top.keys.has(key)) return `${pathOf(stack, key)} is given more than once`;
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = after;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (stack.length >= limits.maxDepth) return `body is nested deeper than ${limits.maxDepth} levels`;
      stack.push(
        code === OPEN_BRACE
          ? { kind: 'object', keys: new Set(), expectKey: true }
          : { kind: 'array', index: 0 },
      );
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      stack.pop();
    } else if (code === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.index++;
    }
    i++;
  }
  return undefined;
};
