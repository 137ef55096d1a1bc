/**
 * Rules that JSON Schema cannot state, as small named functions. Each returns the rule text
 * of the problem found, or undefined when the value is fine.
 */

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since the epoch of a `YYYY-MM-DD` date that exists in the calendar, else undefined. */
export const calendarDay = (value: string): number | undefined => {
  const match = isoDate.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const time = Date.UTC(year, month - 1, day);
  const date = new Date(time);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined;
  }
  return time / 86_400_000;
};

const today = (now: Date): number => Math.floor(now.getTime() / 86_400_000);

/** SaleDate: a date that exists, not later than tomorrow (UTC). */
export const checkSaleDate = (value: string, now = new Date()): string | undefined => {
  const day = calendarDay(value);
  if (day === undefined) return 'is not a date that exists';
  if (day > today(now) + 1) return 'must not be later than tomorrow';
  return undefined;
};

/** DOB: a date that exists, in the past. */
export const checkDateOfBirth = (value: string, now = new Date()): string | undefined => {
  const day = calendarDay(value);
  if (day === undefined) return 'is not a date that exists';
  if (day >= today(now)) return 'must be in the past';
  return undefined;
};

/** CommPriv: `Commercial`/`Private` in any case become `C`/`P`; anything else is left for the schema to judge. */
export const normaliseCommPriv = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  const lower = value.toLowerCase();
  if (lower === 'commercial') return 'C';
  if (lower === 'private') return 'P';
  return value;
};

/** Sex: any case, stored upper case. */
export const normaliseSex = (value: unknown): unknown =>
  typeof value === 'string' ? value.toUpperCase() : value;

/**
 * Postcode: a number in the request becomes a string, if it is a whole number from 0 to
 * Number.MAX_SAFE_INTEGER. Any other number (2000.5, -2000, 1e21, a number JSON.parse has already rounded)
 * has no faithful string form and stays a number, for {@link checkPostcodeNumber} to refuse.
 */
export const postcodeToString = (value: unknown): unknown =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;

/** A Postcode still a number after {@link postcodeToString}: not a whole number a postcode can be. */
export const checkPostcodeNumber = (value: unknown): string | undefined =>
  typeof value === 'number'
    ? `must be a string or a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`
    : undefined;

/**
 * True when a string holds a C0 control character other than tab, line feed and carriage return, or DEL.
 * Such characters have no place in names, addresses or comments and break the systems downstream.
 */
export const hasControlCharacter = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) return true;
  }
  return false;
};

/** True when a string holds U+FFFE or U+FFFF: noncharacters, which SQS refuses in a message (so would never queue). */
export const hasNoncharacter = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0xfffe || code === 0xffff) return true;
  }
  return false;
};

/**
 * Any string field, as sent (before trimming): no control characters (see {@link hasControlCharacter}) and no
 * U+FFFE or U+FFFF (see {@link hasNoncharacter}).
 */
export const checkCharacters = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  if (hasControlCharacter(value)) return 'must not contain control characters';
  if (hasNoncharacter(value)) return 'must not contain the noncharacters U+FFFE or U+FFFF';
  return undefined;
};

/** A field given more than once: an HTML form repeating a field (`a=1&a=2`) is parsed into an array. */
export const checkSingleValue = (value: unknown): string | undefined =>
  Array.isArray(value) ? 'must be a single value' : undefined;

const truthy = new Set(['true', 'on', 'yes', '1']);
const falsy = new Set(['false', 'off', 'no', '0']);

/** Form and JSON booleans: true/false, on/off, yes/no, 1/0 in any case; anything else is left for the schema. */
export const parseBoolean = (value: unknown): unknown => {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : value;
  if (typeof value !== 'string') return value;
  const lower = value.toLowerCase();
  if (truthy.has(lower)) return true;
  if (falsy.has(lower)) return false;
  return value;
};

/**
 * Strings trimmed; blank strings dropped, so that blank counts as missing.
 * Builds a fresh object with own data properties only, so a `__proto__` key stays an ordinary key.
 */
export const trimAndDropBlanks = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(record)
      .map(([key, value]) => [key, typeof value === 'string' ? value.trim() : value] as const)
      .filter(([, value]) => value !== ''),
  );
