import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../lib/validation/format.ts';
import { validateSalesRegistrations } from '../../lib/validation/salesRegistration.ts';
import { salesRegistrationInput as input } from '../../testkit/factories/records.ts';

const NOW = new Date('2026-11-22T10:00:00Z');

const messages = (body: unknown): string[] => {
  const result = validateSalesRegistrations(body, NOW);
  return result.ok ? [] : result.problems.map(formatProblem);
};

const accepted = (record: Record<string, unknown>) => {
  const result = validateSalesRegistrations([record], NOW);
  if (!result.ok) throw new Error(`refused: ${result.problems.map(formatProblem).join('; ')}`);
  return result.value[0];
};

describe('sales registration validation, row by row of the contract', () => {
  it.each([
    ['4-digit dealer number', 1000],
    ['4-digit dealer number', 9999],
    ['6-digit business-partner number', 100000],
    ['6-digit business-partner number', 999999],
  ])('DealerId: accepts a %s (%i)', (_label, DealerId) => {
    expect(accepted(input({ DealerId })).DealerId).toBe(DealerId);
  });

  it.each([999, 10000, 99999, 1000000, 1234.5, '1234', -1234])('DealerId: refuses %s', (DealerId) => {
    expect(messages([input({ DealerId })])).toEqual([
      '[0].DealerId must be a 4-digit dealer number (1000-9999) or a 6-digit business-partner number (100000-999999)',
    ]);
  });

  it('FrameNum: trimmed, at most 30 characters', () => {
    expect(accepted(input({ FrameNum: `  ${'F'.repeat(30)}  ` })).FrameNum).toBe('F'.repeat(30));
    expect(messages([input({ FrameNum: 'F'.repeat(31) })])).toEqual([
      '[0].FrameNum must be at most 30 characters',
    ]);
    expect(messages([input({ FrameNum: '   ' })])).toEqual(['[0].FrameNum is required']);
  });

  it('SaleDate: a calendar date that exists, not later than tomorrow (UTC)', () => {
    expect(accepted(input({ SaleDate: '2024-02-29' })).SaleDate).toBe('2024-02-29');
    expect(accepted(input({ SaleDate: '2026-11-23' })).SaleDate).toBe('2026-11-23');
    expect(messages([input({ SaleDate: '2026-11-24' })])).toEqual([
      '[0].SaleDate must not be later than tomorrow',
    ]);
    expect(messages([input({ SaleDate: '2025-02-29' })])).toEqual(['[0].SaleDate is not a date that exists']);
    expect(messages([input({ SaleDate: '2026-13-01' })])).toEqual(['[0].SaleDate is not a date that exists']);
    expect(messages([input({ SaleDate: '20/11/2026' })])).toEqual([
      '[0].SaleDate must be a date in the form YYYY-MM-DD',
    ]);
    expect(messages([input({ SaleDate: undefined })])).toEqual(['[0].SaleDate is required']);
  });

  it('DOB: optional calendar date in the past', () => {
    expect(accepted(input()).DOB).toBeUndefined();
    expect(accepted(input({ DOB: '1990-06-15' })).DOB).toBe('1990-06-15');
    expect(messages([input({ DOB: '2026-11-22' })])).toEqual(['[0].DOB must be in the past']);
    expect(messages([input({ DOB: '1990-02-30' })])).toEqual(['[0].DOB is not a date that exists']);
    expect(messages([input({ DOB: '15.06.1990' })])).toEqual([
      '[0].DOB must be a date in the form YYYY-MM-DD',
    ]);
  });

  it.each(['Name', 'Name2', 'Street', 'Phone'])(
    '%s: non-blank string (blank or whitespace counts as missing)',
    (field) => {
      expect(accepted(input({ [field]: '  kept  ' }))[field as 'Name']).toBe('kept');
      expect(messages([input({ [field]: '' })])).toEqual([`[0].${field} is required`]);
      expect(messages([input({ [field]: ' \t ' })])).toEqual([`[0].${field} is required`]);
      expect(messages([input({ [field]: undefined })])).toEqual([`[0].${field} is required`]);
      expect(messages([input({ [field]: 42 })])).toEqual([`[0].${field} must be a string`]);
    },
  );

  it('email: a valid address, at most 80 characters', () => {
    expect(accepted(input({ email: ' a.b@example.com ' })).email).toBe('a.b@example.com');
    expect(messages([input({ email: 'not-an-email' })])).toEqual(['[0].email is not a valid email address']);
    expect(messages([input({ email: `${'a'.repeat(70)}@example.com` })])).toEqual([
      '[0].email must be at most 80 characters',
    ]);
    expect(messages([input({ email: undefined })])).toEqual(['[0].email is required']);
  });

  it('CommPriv: C or P; Commercial/Private in any case are stored as C/P', () => {
    expect(accepted(input({ CommPriv: 'P' })).CommPriv).toBe('P');
    expect(accepted(input({ CommPriv: 'private' })).CommPriv).toBe('P');
    expect(accepted(input({ CommPriv: 'COMMERCIAL', CompanyName: 'Acme' })).CommPriv).toBe('C');
    expect(messages([input({ CommPriv: 'X' })])).toEqual([
      '[0].CommPriv must be C (commercial) or P (private)',
    ]);
    expect(messages([input({ CommPriv: undefined })])).toEqual(['[0].CommPriv is required']);
  });

  it('CompanyName: required and non-blank when CommPriv is C, optional otherwise', () => {
    expect(accepted(input({ CommPriv: 'C', CompanyName: 'Acme Pty Ltd' })).CompanyName).toBe('Acme Pty Ltd');
    expect(accepted(input({ CommPriv: 'P' })).CompanyName).toBeUndefined();
    expect(messages([input({ CommPriv: 'C' })])).toEqual([
      '[0].CompanyName is required when CommPriv is C (commercial)',
    ]);
    expect(messages([input({ CommPriv: 'Commercial', CompanyName: '  ' })])).toEqual([
      '[0].CompanyName is required when CommPriv is C (commercial)',
    ]);
  });

  it.each(['MoreInfo', 'AllowSharing'])('%s: Y or N, N when omitted', (field) => {
    expect(accepted(input())[field as 'MoreInfo']).toBe('N');
    expect(accepted(input({ [field]: 'Y' }))[field as 'MoreInfo']).toBe('Y');
    expect(messages([input({ [field]: 'yes' })])).toEqual([`[0].${field} must be Y or N`]);
  });

  it('Postcode: string or number in the request, always a string after acceptance', () => {
    expect(accepted(input({ Postcode: 2000 })).Postcode).toBe('2000');
    expect(accepted(input({ Postcode: ' 2000 ' })).Postcode).toBe('2000');
    expect(messages([input({ Postcode: true })])).toEqual(['[0].Postcode must be a string or a number']);
  });

  it('Sex: optional M, F or X in any case, stored upper case', () => {
    expect(accepted(input({ Sex: 'f' })).Sex).toBe('F');
    expect(accepted(input({ Sex: 'X' })).Sex).toBe('X');
    expect(messages([input({ Sex: 'Q' })])).toEqual(['[0].Sex must be M, F or X']);
  });

  it.each(['Model', 'Floor', 'Town', 'State', 'RiderTraining', 'Operator', 'Finance', 'Promo', 'Cashback'])(
    '%s: trimmed, at most 255 characters',
    (field) => {
      expect(accepted(input({ [field]: ` ${'v'.repeat(255)} ` }))[field as 'Model']).toBe('v'.repeat(255));
      expect(messages([input({ [field]: 'v'.repeat(256) })])).toEqual([
        `[0].${field} must be at most 255 characters`,
      ]);
    },
  );

  it('unknown property: rejected, naming the property', () => {
    expect(messages([input({ Colour: 'red' })])).toEqual(['[0].Colour is not a known field']);
  });

  it('body: a JSON array of 1 to 500 records', () => {
    expect(messages({})).toEqual(['body must be a JSON array of sales registration records']);
    expect(messages([])).toEqual(['body must hold at least one sales registration record']);
    expect(messages(Array.from({ length: 501 }, () => input()))).toEqual([
      'body must hold at most 500 sales registration records',
    ]);
    expect(
      validateSalesRegistrations(
        Array.from({ length: 500 }, () => input()),
        NOW,
      ).ok,
    ).toBe(true);
    expect(messages([input(), 'text'])).toEqual(['[1] must be an object']);
  });

  it('control characters: refused in any known field as sent, before trimming, with no second problem', () => {
    // Act
    const problems = messages([
      input({
        Name: 'Test\u0000person',
        Name2: '\u000b',
        email: 'a\u001bb@example.com',
        Model: `${'v'.repeat(300)}\u0007`,
        Town: 'Example\u007fton',
        Street: '1 Sample Street\r\n\tRear',
      }),
    ]);

    // Assess
    expect(problems).toEqual([
      '[0].Model must not contain control characters',
      '[0].Name must not contain control characters',
      '[0].Name2 must not contain control characters',
      '[0].Town must not contain control characters',
      '[0].email must not contain control characters',
    ]);
  });

  it('noncharacters U+FFFE and U+FFFF: refused in any known field', () => {
    expect(messages([input({ Street: '1 Sample Street\ufffe' }), input({ Phone: '\uffff' })])).toEqual([
      '[0].Street must not contain the noncharacters U+FFFE or U+FFFF',
      '[1].Phone must not contain the noncharacters U+FFFE or U+FFFF',
    ]);
  });

  it('an unknown field is refused as unknown, its name shown with ? for controls, its value unchecked', () => {
    expect(messages([input({ 'Col\u0000our': 'r\u0000ed' })])).toEqual(['[0].Col?our is not a known field']);
  });

  it('Postcode: a whole number from 0 becomes a string; any other number is refused', () => {
    // Act
    const zero = accepted(input({ Postcode: 0 })).Postcode;
    const refused = [2000.5, -2000, 1e21, 2 ** 53].map((Postcode) => messages([input({ Postcode })]));

    // Assess
    expect(zero).toBe('0');
    expect(refused).toEqual(
      refused.map(() => ['[0].Postcode must be a string or a whole number from 0 to 9007199254740991']),
    );
  });

  it('Postcode: each record judged on its own, whatever the others have', () => {
    // Act
    const problems = messages([
      input({ Postcode: '2\u0000000' }),
      input({ Name: 'N\u0000', Postcode: 2000.5 }),
      input({ Postcode: -1 }),
    ]);

    // Assess
    expect(problems).toEqual([
      '[0].Postcode must not contain control characters',
      '[1].Name must not contain control characters',
      '[1].Postcode must be a string or a whole number from 0 to 9007199254740991',
      '[2].Postcode must be a string or a whole number from 0 to 9007199254740991',
    ]);
  });

  it('an optional field not sent is absent from the record, not present and undefined', () => {
    // Prepare
    const { Postcode: _postcode, ...record } = input();

    // Act
    const value = accepted(record);

    // Assess
    expect(Object.keys(value).sort()).toEqual([...Object.keys(record), 'MoreInfo', 'AllowSharing'].sort());
  });

  it.each([
    ['SaleDate', '2030-01-01'],
    ['DOB', '2030-01-01'],
    ['SaleDate', '2025-02-30'],
    ['DOB', '1990-02-30'],
  ])('%s: a date only in an array (%s) is refused for its type alone', (field, date) => {
    expect(messages([input({ [field]: [date] })])).toEqual([`[0].${field} must be a string`]);
  });

  it.each([
    ['SaleDate', 'x2025-02-30'],
    ['SaleDate', '2025-02-30x'],
    ['SaleDate', '12025-02-30'],
    ['DOB', 'x1990-02-30'],
    ['DOB', '1990-02-30x'],
    ['DOB', '1990-02-300'],
  ])('%s: %j is refused for its form alone', (field, value) => {
    expect(messages([input({ [field]: value })])).toEqual([
      `[0].${field} must be a date in the form YYYY-MM-DD`,
    ]);
  });

  it('SaleDate and DOB: a year below 100 is not read as 19xx', () => {
    expect(messages([input({ SaleDate: '0026-11-20', DOB: '0090-06-15' })])).toEqual([
      '[0].SaleDate is not a date that exists',
      '[0].DOB is not a date that exists',
    ]);
  });

  it('a record that is null or not an object is named by its index', () => {
    expect(messages([input(), null, 'text', 42, input({ email: 'bad' })])).toEqual([
      '[1] must be an object',
      '[2] must be an object',
      '[3] must be an object',
      '[4].email is not a valid email address',
    ]);
  });

  it('names records from index 10 on by their whole index', () => {
    // Prepare
    const body = Array.from({ length: 12 }, (_, i) => input(i === 11 ? { email: 'bad' } : {}));

    // Act
    const problems = messages(body);

    // Assess
    expect(problems).toEqual(['[11].email is not a valid email address']);
  });

  it('more than 500 records: that alone is the answer, no record is judged', () => {
    // Prepare
    const body = Array.from({ length: 501 }, () => input({ email: 'bad', Name: '\u0000' }));

    // Act
    const result = validateSalesRegistrations(body, NOW);

    // Assess
    expect(result).toEqual({
      ok: false,
      problems: [{ rule: 'must hold at most 500 sales registration records' }],
    });
  });

  it('reports every problem of every record at once, record by record', () => {
    // Prepare
    const body = [
      input({ email: 'bad' }),
      input(),
      input({ DealerId: 12, Name: ' ', SaleDate: '2026-02-30' }),
    ];
    // Act
    const problems = messages(body);
    // Assess
    expect(problems).toEqual([
      '[0].email is not a valid email address',
      '[2].Name is required',
      '[2].DealerId must be a 4-digit dealer number (1000-9999) or a 6-digit business-partner number (100000-999999)',
      '[2].SaleDate is not a date that exists',
    ]);
  });
});
