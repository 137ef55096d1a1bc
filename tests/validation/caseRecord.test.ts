import { describe, expect, it } from 'vitest';
import { validateCaseRecord } from '../../lib/validation/caseRecord.ts';
import { formatProblem } from '../../lib/validation/format.ts';
import { caseInput as input } from '../../testkit/factories/records.ts';

const messages = (body: unknown): string[] => {
  const result = validateCaseRecord(body);
  return result.ok ? [] : result.problems.map(formatProblem);
};

const accepted = (body: Record<string, unknown>) => {
  const result = validateCaseRecord(body);
  if (!result.ok) throw new Error(`refused: ${result.problems.map(formatProblem).join('; ')}`);
  return result.value as unknown as Record<string, unknown>;
};

describe('case validation, row by row of the contract', () => {
  it.each(['firstName', 'surname'])('%s: non-blank, at most 40 characters', (field) => {
    expect(accepted(input({ [field]: ` ${'n'.repeat(40)} ` }))[field]).toBe('n'.repeat(40));
    expect(messages(input({ [field]: 'n'.repeat(41) }))).toEqual([`${field} must be at most 40 characters`]);
    expect(messages(input({ [field]: '   ' }))).toEqual([`${field} is required`]);
    expect(messages(input({ [field]: undefined }))).toEqual([`${field} is required`]);
  });

  it('email: valid address, at most 80 characters', () => {
    expect(accepted(input({ email: 'x.y@example.org' })).email).toBe('x.y@example.org');
    expect(messages(input({ email: 'nope' }))).toEqual(['email is not valid']);
    expect(messages(input({ email: `${'a'.repeat(70)}@example.com` }))).toEqual([
      'email must be at most 80 characters',
    ]);
    expect(messages(input({ email: '' }))).toEqual(['email is required']);
  });

  it.each(['privacyConsent', 'subscribeToBrand', 'ownBrand'])(
    '%s: booleans in every accepted spelling',
    (field) => {
      for (const yes of [true, 'true', 'TRUE', 'on', 'Yes', '1', 1])
        expect(accepted(input({ [field]: yes }))[field]).toBe(true);
      for (const no of [false, 'false', 'off', 'NO', '0', 0])
        expect(accepted(input({ [field]: no }))[field]).toBe(false);
      expect(messages(input({ [field]: 'maybe' }))).toEqual([`${field} must be true or false`]);
    },
  );

  it('a checkbox left unticked stays absent', () => {
    expect('subscribeToBrand' in accepted(input())).toBe(false);
  });

  it('comments: at most 32,000 characters', () => {
    expect((accepted(input({ comments: 'c'.repeat(32000) })).comments as string).length).toBe(32000);
    expect(messages(input({ comments: 'c'.repeat(32001) }))).toEqual([
      'comments must be at most 32000 characters',
    ]);
  });

  it('frameNo and vin-frame: either sets the frame number; both and different is invalid', () => {
    expect(accepted(input({ frameNo: 'F1' })).frameNo).toBe('F1');
    expect(accepted(input({ 'vin-frame': 'V1' })).frameNo).toBe('V1');
    expect('vin-frame' in accepted(input({ 'vin-frame': 'V1' }))).toBe(false);
    expect(accepted(input({ frameNo: 'F1', 'vin-frame': ' F1 ' })).frameNo).toBe('F1');
    expect(messages(input({ frameNo: 'F1', 'vin-frame': 'F2' }))).toEqual([
      'vin-frame must match frameNo when both are given',
    ]);
  });

  it.each(['title', 'mobile', 'homePhone', 'addressPostcode', 'siteName', 'origin'])(
    '%s: trimmed, at most 255 characters',
    (field) => {
      expect(accepted(input({ [field]: ` ${'s'.repeat(255)} ` }))[field]).toBe('s'.repeat(255));
      expect(messages(input({ [field]: 's'.repeat(256) }))).toEqual([
        `${field} must be at most 255 characters`,
      ]);
    },
  );

  it('unknown property: ignored and not forwarded', () => {
    const value = accepted(input({ submit: 'Send', utm_source: 'mail' }));
    expect(value).not.toHaveProperty('submit');
    expect(value).not.toHaveProperty('utm_source');
  });

  it('a JSON array is not a case', () => {
    expect(messages([input()])).toEqual(['body must be a single case object']);
  });

  it.each([
    ['null', null],
    ['a string', 'firstName=Ana'],
    ['a number', 42],
    ['a boolean', true],
    ['nothing', undefined],
  ])('%s is not a case', (_label, body) => {
    expect(messages(body)).toEqual(['body must be a single case object']);
  });

  it('control characters: refused in any known field as sent, before trimming, with no second problem', () => {
    // Act
    const problems = messages(
      input({
        firstName: '\u000b',
        surname: 'Case\u0000person',
        email: 'bernadette\u007f@example.com',
        comments: 'line one\r\n\tline two',
      }),
    );

    // Assess
    expect(problems).toEqual([
      'firstName must not contain control characters',
      'surname must not contain control characters',
      'email must not contain control characters',
    ]);
  });

  it('noncharacters U+FFFE and U+FFFF: refused in any known field', () => {
    expect(messages(input({ comments: 'Call me \uffff', siteName: '\ufffeShop' }))).toEqual([
      'siteName must not contain the noncharacters U+FFFE or U+FFFF',
      'comments must not contain the noncharacters U+FFFE or U+FFFF',
    ]);
  });

  it('a field repeated by a form: refused once, with no second problem about its type', () => {
    // Act
    const problems = messages(input({ firstName: ['Ana', 'Bea'], ownBrand: ['on', 'on'], mobile: [] }));

    // Assess
    expect(problems).toEqual([
      'firstName must be a single value',
      'mobile must be a single value',
      'ownBrand must be a single value',
    ]);
  });

  it('a repeated field holding control characters is refused as repeated', () => {
    expect(messages(input({ surname: ['a\u0000', 'b'] }))).toEqual(['surname must be a single value']);
  });

  it('unknown fields are not checked: control characters or repeats there are ignored too', () => {
    const value = accepted(input({ submit: 'Se\u0000nd', utm: ['a', 'b'] }));
    expect(value).not.toHaveProperty('submit');
    expect(value).not.toHaveProperty('utm');
  });

  it('a number that is not 0 or 1 is not a boolean', () => {
    expect(messages(input({ privacyConsent: 2, ownBrand: -1 }))).toEqual([
      'privacyConsent must be true or false',
      'ownBrand must be true or false',
    ]);
  });

  it('addressPostcode: a whole number becomes a string; any other number is refused', () => {
    // Act
    const whole = accepted(input({ addressPostcode: 3000 })).addressPostcode;
    const zero = accepted(input({ addressPostcode: 0 })).addressPostcode;
    const refused = [2000.5, -3000, 2 ** 53].map((addressPostcode) => messages(input({ addressPostcode })));

    // Assess
    expect(whole).toBe('3000');
    expect(zero).toBe('0');
    expect(refused).toEqual(
      refused.map(() => ['addressPostcode must be a string or a whole number from 0 to 9007199254740991']),
    );
  });

  it('addressPostcode: refused as a number when another field is refused for its characters', () => {
    expect(messages(input({ firstName: 'A\u0000', addressPostcode: 2000.5 }))).toEqual([
      'firstName must not contain control characters',
      'addressPostcode must be a string or a whole number from 0 to 9007199254740991',
    ]);
  });

  it('addressPostcode: a repeated one is refused as repeated only', () => {
    expect(messages(input({ addressPostcode: [3000, 3001] }))).toEqual([
      'addressPostcode must be a single value',
    ]);
  });

  it('an optional field not sent is absent from the case, not present and undefined', () => {
    // Prepare
    const { addressPostcode: _postcode, privacyConsent: _consent, ...body } = input();

    // Act
    const value = accepted(body);

    // Assess
    expect(Object.keys(value).sort()).toEqual([
      'comments',
      'email',
      'firstName',
      'mobile',
      'surname',
      'title',
    ]);
  });

  it('reports every problem at once', () => {
    expect(messages(input({ email: 'bad', firstName: '', ownBrand: 'perhaps' }))).toEqual([
      'firstName is required',
      'email is not valid',
      'ownBrand must be true or false',
    ]);
  });
});
