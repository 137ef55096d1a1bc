import { describe, expect, it } from 'vitest';
import {
  calendarDay,
  checkCharacters,
  checkDateOfBirth,
  checkPostcodeNumber,
  checkSaleDate,
  checkSingleValue,
  hasControlCharacter,
  hasNoncharacter,
  normaliseCommPriv,
  normaliseSex,
  parseBoolean,
  postcodeToString,
  trimAndDropBlanks,
} from '../../lib/validation/fieldRules.ts';

const NOW = new Date('2026-11-22T23:30:00Z');
const DAY = 86_400_000;

describe('calendarDay: days since the epoch of a YYYY-MM-DD date that exists', () => {
  it('counts days since 1970-01-01 (UTC)', () => {
    // Act
    const days = ['1970-01-01', '1970-01-02', '2024-02-29', '2026-11-22'].map(calendarDay);

    // Assess
    expect(days).toEqual([0, 1, Date.UTC(2024, 1, 29) / DAY, Date.UTC(2026, 10, 22) / DAY]);
  });

  it.each([
    ['2025-02-29', 'no 29 February in a common year'],
    ['2026-04-31', 'April has 30 days'],
    ['2026-13-01', 'no month 13'],
    ['2026-00-10', 'no month 0'],
    ['2026-01-00', 'no day 0'],
    ['0050-01-01', 'a year below 100, which Date.UTC would read as 1950'],
  ])('%s does not exist (%s)', (value) => {
    expect(calendarDay(value)).toBeUndefined();
  });

  it.each([
    '2026-1-05',
    '26-01-05',
    '2026-01-5',
    'x2026-01-05',
    '2026-01-05x',
    '12026-01-05',
    '2026-01-055',
    'abcd-ef-gh',
    '',
  ])('%j is not in the form YYYY-MM-DD', (value) => {
    expect(calendarDay(value)).toBeUndefined();
  });
});

describe('checkSaleDate: a date that exists, not later than tomorrow (UTC)', () => {
  it('accepts today and tomorrow in UTC, refuses the day after', () => {
    // Act
    const rules = ['2026-11-22', '2026-11-23', '2026-11-24'].map((day) => checkSaleDate(day, NOW));

    // Assess
    expect(rules).toEqual([undefined, undefined, 'must not be later than tomorrow']);
  });

  it('refuses a date that does not exist', () => {
    expect(checkSaleDate('2026-02-30', NOW)).toBe('is not a date that exists');
  });
});

describe('checkDateOfBirth: a date that exists, in the past', () => {
  it('accepts yesterday in UTC, refuses today and later', () => {
    // Act
    const rules = ['2026-11-21', '2026-11-22', '2026-11-23'].map((day) => checkDateOfBirth(day, NOW));

    // Assess
    expect(rules).toEqual([undefined, 'must be in the past', 'must be in the past']);
  });

  it('refuses a date that does not exist', () => {
    expect(checkDateOfBirth('1990-02-30', NOW)).toBe('is not a date that exists');
  });
});

describe('hasControlCharacter: C0 controls other than tab, line feed and carriage return, and DEL', () => {
  it.each([
    ['NUL', '\u0000'],
    ['unit separator', '\u001f'],
    ['escape', '\u001b'],
    ['vertical tab', '\u000b'],
    ['DEL', '\u007f'],
  ])('%s anywhere in the text is one', (_label, control) => {
    expect([`${control}ab`, `a${control}b`, `ab${control}`].map(hasControlCharacter)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it.each([
    ['tab', '\t'],
    ['line feed', '\n'],
    ['carriage return', '\r'],
    ['space', ' '],
    ['tilde', '~'],
    ['C1 control U+0080', '\u0080'],
    ['no-break space', '\u00a0'],
  ])('%s is not one', (_label, character) => {
    expect(hasControlCharacter(`a${character}b`)).toBe(false);
  });

  it('the empty string has none', () => {
    expect(hasControlCharacter('')).toBe(false);
  });
});

describe('hasNoncharacter: U+FFFE and U+FFFF', () => {
  it('finds either anywhere in the text', () => {
    expect(['\ufffeab', 'a\ufffeb', 'ab\uffff', '\uffff'].map(hasNoncharacter)).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('lets every other character pass, the neighbours of the two included', () => {
    expect(['', 'plain', '\ufffd', '\ufeff', 'emoji 😀', '\u0000'].map(hasNoncharacter)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('checkCharacters: the rule of any string field as sent', () => {
  it('names control characters first, then noncharacters', () => {
    // Act
    const rules = ['a\u0000b', 'a\uffffb', 'a\u0000\uffff', 'fine\tand\r\nfine'].map(checkCharacters);

    // Assess
    expect(rules).toEqual([
      'must not contain control characters',
      'must not contain the noncharacters U+FFFE or U+FFFF',
      'must not contain control characters',
      undefined,
    ]);
  });

  it('leaves values that are not strings to the schema', () => {
    expect([42, null, undefined, true, ['a\u0000'], { a: '\u0000' }].map(checkCharacters)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('checkSingleValue: a field given more than once', () => {
  it('refuses an array (a repeated form field), whatever it holds', () => {
    expect([['a', 'b'], ['a'], []].map(checkSingleValue)).toEqual([
      'must be a single value',
      'must be a single value',
      'must be a single value',
    ]);
  });

  it('accepts any single value', () => {
    expect(['a', '', 0, null, undefined, { a: 1 }].map(checkSingleValue)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('parseBoolean: true/false, on/off, yes/no, 1/0 in any case', () => {
  it.each(['true', 'TRUE', 'on', 'On', 'yes', 'YES', '1'])('%j is true', (value) => {
    expect(parseBoolean(value)).toBe(true);
  });

  it.each(['false', 'False', 'off', 'OFF', 'no', 'No', '0'])('%j is false', (value) => {
    expect(parseBoolean(value)).toBe(false);
  });

  it('keeps booleans and reads the numbers 1 and 0', () => {
    expect([true, false, 1, 0].map(parseBoolean)).toEqual([true, false, true, false]);
  });

  it.each([
    ['another number', 2],
    ['a negative number', -1],
    ['another word', 'maybe'],
    ['a padded word', ' yes'],
    ['the empty string', ''],
    ['null', null],
    ['undefined', undefined],
    ['an array', ['yes', 'no']],
    ['an object', { value: 'yes' }],
  ])('leaves %s to the schema, unchanged', (_label, value) => {
    expect(parseBoolean(value)).toBe(value);
  });
});

describe('normaliseCommPriv and normaliseSex', () => {
  it('turns Commercial and Private in any case into C and P, and nothing else', () => {
    expect(['Commercial', 'PRIVATE', 'private', 'C', 'x', 42].map(normaliseCommPriv)).toEqual([
      'C',
      'P',
      'P',
      'C',
      'x',
      42,
    ]);
  });

  it('upper-cases a string and leaves anything else as it is', () => {
    const list = ['f'];
    expect([
      normaliseSex('x'),
      normaliseSex('M'),
      normaliseSex(7),
      normaliseSex(null),
      normaliseSex(list),
    ]).toEqual(['X', 'M', 7, null, list]);
  });
});

describe('Postcode numbers: postcodeToString and checkPostcodeNumber', () => {
  it('turns a whole number from 0 to MAX_SAFE_INTEGER into its digits', () => {
    expect([0, 2000, Number.MAX_SAFE_INTEGER].map(postcodeToString)).toEqual([
      '0',
      '2000',
      '9007199254740991',
    ]);
  });

  it.each([
    ['a fraction', 2000.5],
    ['a negative number', -2000],
    ['a number beyond MAX_SAFE_INTEGER', 2 ** 53],
    ['1e21', 1e21],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('keeps %s a number, which checkPostcodeNumber refuses', (_label, value) => {
    // Act
    const converted = postcodeToString(value);

    // Assess
    expect(converted).toBe(value);
    expect(checkPostcodeNumber(converted)).toBe(
      'must be a string or a whole number from 0 to 9007199254740991',
    );
  });

  it('leaves anything but a number alone, and checkPostcodeNumber lets it pass', () => {
    // Prepare
    const values = ['2000', '', null, undefined, true, ['2000']];

    // Act
    const converted = values.map(postcodeToString);

    // Assess
    expect(converted).toEqual(values);
    expect(converted.map(checkPostcodeNumber)).toEqual(values.map(() => undefined));
  });
});

describe('trimAndDropBlanks', () => {
  it('trims strings, drops blank ones and keeps every other value as it is', () => {
    // Prepare
    const list = [' a '];
    const record = { a: '  x  ', b: '   ', c: '', d: 0, e: false, f: null, g: list, h: '\t\n' };

    // Act
    const prepared = trimAndDropBlanks(record);

    // Assess
    expect(prepared).toEqual({ a: 'x', d: 0, e: false, f: null, g: list });
    expect(Object.keys(prepared)).toEqual(['a', 'd', 'e', 'f', 'g']);
    expect(record.a).toBe('  x  ');
  });

  it('keeps a __proto__ key an ordinary own key', () => {
    // Prepare
    const record = JSON.parse('{"__proto__": {"polluted": " yes "}, "name": " n "}');

    // Act
    const prepared = trimAndDropBlanks(record);

    // Assess
    expect(Object.hasOwn(prepared, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(prepared)).toBe(Object.prototype);
    expect(prepared.name).toBe('n');
  });
});
