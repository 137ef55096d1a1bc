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

/** Postcode: a number in the request becomes a string. */
export const postcodeToString = (value: unknown): unknown =>
  typeof value === 'number' && Number.isFinite(value) ? String(value) : value;

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
