/**
 * The one classification of record fields: every field of both schemas is classed, a field it does not name is
 * personal, and a record's personal values are exactly what it does not class `kept`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CASE_FIELD_CLASSES,
  fieldClass,
  keptFields,
  personalValuesOf,
  SALES_FIELD_CLASSES,
} from '../../lib/privacy/fieldClassification.ts';

const schemaFields = (file: string): string[] => {
  const schema = JSON.parse(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8'));
  return Object.keys((schema.items ?? schema).properties);
};

describe('fieldClassification', () => {
  it('classes every field of both schemas, and no other (vin-frame is folded into frameNo)', () => {
    expect(Object.keys(SALES_FIELD_CLASSES).sort()).toEqual(
      schemaFields('salesRegistration.schema.json').sort(),
    );
    expect(Object.keys(CASE_FIELD_CLASSES).sort()).toEqual(
      schemaFields('caseRecord.schema.json')
        .filter((field) => field !== 'vin-frame')
        .sort(),
    );
  });

  it('classes the free texts and sex of a sale and the title of a case as personal', () => {
    for (const field of ['Finance', 'Promo', 'RiderTraining', 'Cashback', 'Sex', 'Operator']) {
      expect(fieldClass('salesRegistration', field)).not.toBe('kept');
    }
    expect(fieldClass('caseRecord', 'title')).toBe('code');
  });

  it('classes a field it does not name as personal free text', () => {
    expect(fieldClass('caseRecord', 'licenceNumber')).toBe('text');
    expect(fieldClass('salesRegistration', 'toString')).toBe('text');
  });

  it("gives a record's personal values with their kinds: unclassified ones included, kept ones and booleans not", () => {
    // Act
    const values = personalValuesOf('caseRecord', {
      firstName: 'Ana',
      frameNo: 'JH2X',
      privacyConsent: true,
      title: 'Dr',
      licenceNumber: 'L-12345',
      extra: { nested: ['deep', 42, false] },
    });
    // Assess
    expect(values).toEqual([
      { kind: 'name', value: 'Ana' },
      { kind: 'code', value: 'Dr' },
      { kind: 'text', value: 'L-12345' },
      { kind: 'text', value: 'deep' },
      { kind: 'text', value: '42' },
    ]);
    expect(keptFields('caseRecord')).not.toContain('title');
  });
});
