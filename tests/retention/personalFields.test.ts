/**
 * What of a record is kept once its personal data is removed: an allow-list per kind, so every field of the schemas
 * is either kept on purpose or removed, and a field nobody has decided about is removed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keptFields } from '../../lib/privacy/fieldClassification.ts';
import { withoutPersonalData } from '../../lib/retention/personalFields.ts';

const schemaFields = (file: string): string[] => {
  const schema = JSON.parse(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8'));
  return Object.keys((schema.items ?? schema).properties);
};

/** A sale with every field of the schema set. */
const fullSale = {
  DealerId: 4321,
  FrameNum: 'RETFRAME000000001',
  Model: 'CB500X',
  SaleDate: '2026-01-09',
  Name: 'Retentionperson',
  Name2: 'Quentin',
  CompanyName: 'Quentin Retentionperson Motors',
  Street: '9 Purge Lane',
  Floor: 'Unit 4',
  Town: 'Forgetton',
  Postcode: '7319',
  State: 'TAS',
  email: 'quentin.retentionperson@example.com',
  Phone: '+61 400 000 931',
  CommPriv: 'C',
  RiderTraining: 'Booked with instructor Ivy Coachperson',
  MoreInfo: 'Y',
  AllowSharing: 'N',
  Operator: 'Olga Operatorperson',
  Finance: 'Loan 55-0192 for Q. Retentionperson',
  Promo: 'SPRING26',
  Cashback: '200',
  DOB: '1979-03-14',
  Sex: 'M',
};

/** A case with every field of the schema set (vin-frame is folded into frameNo by normalisation). */
const fullCase = {
  title: 'Dr',
  firstName: 'Winifred',
  surname: 'Caseforget',
  email: 'winifred.caseforget@example.com',
  mobile: '+61 400 000 932',
  homePhone: '+61 3 9000 0933',
  addressPostcode: '3999',
  privacyConsent: true,
  subscribeToBrand: false,
  ownBrand: true,
  siteName: 'Service enquiry',
  comments: 'My neighbour Harold Otherperson said to call you.',
  origin: 'Web',
  frameNo: 'RETFRAME000000002',
};

describe('withoutPersonalData', () => {
  it('keeps of a sale the dealer, the vehicle, the date of sale and the yes/no choices, nothing else', () => {
    // Act
    const kept = withoutPersonalData('salesRegistration', fullSale);
    // Assess
    expect(kept).toEqual({
      DealerId: 4321,
      FrameNum: 'RETFRAME000000001',
      Model: 'CB500X',
      SaleDate: '2026-01-09',
      CommPriv: 'C',
      MoreInfo: 'Y',
      AllowSharing: 'N',
    });
  });

  it("keeps of a case the consents, site, origin and frame number; removes names, contacts and the customer's own words", () => {
    const kept = withoutPersonalData('caseRecord', fullCase);
    expect(kept).toEqual({
      privacyConsent: true,
      subscribeToBrand: false,
      ownBrand: true,
      siteName: 'Service enquiry',
      origin: 'Web',
      frameNo: 'RETFRAME000000002',
    });
  });

  it('leaves absent fields absent and does not change the record it is given', () => {
    // Prepare
    const sale = {
      DealerId: 1234,
      FrameNum: 'F1',
      SaleDate: '2026-01-01',
      Name: 'N',
      email: 'e@example.com',
    };
    const before = structuredClone(sale);
    // Act
    const kept = withoutPersonalData('salesRegistration', sale);
    // Assess
    expect(kept).toEqual({ DealerId: 1234, FrameNum: 'F1', SaleDate: '2026-01-01' });
    expect(Object.keys(kept)).not.toContain('Model');
    expect(sale).toEqual(before);
  });

  it('removes a field nobody has decided about (a field added to a schema later)', () => {
    expect(withoutPersonalData('caseRecord', { frameNo: 'F2', licenceNumber: 'L-12345' })).toEqual({
      frameNo: 'F2',
    });
    expect(withoutPersonalData('salesRegistration', { FrameNum: 'F3', Nickname: 'Speedy' })).toEqual({
      FrameNum: 'F3',
    });
  });

  it('keeps only fields the schemas define, and the full records above cover every field of the schemas', () => {
    const sales = schemaFields('salesRegistration.schema.json');
    const cases = schemaFields('caseRecord.schema.json').filter((field) => field !== 'vin-frame');
    expect(sales).toEqual(expect.arrayContaining(keptFields('salesRegistration')));
    expect(cases).toEqual(expect.arrayContaining(keptFields('caseRecord')));
    // A new schema field fails here until the test (and so the decision above) names it.
    expect(Object.keys(fullSale).sort()).toEqual([...sales].sort());
    expect(Object.keys(fullCase).sort()).toEqual([...cases].sort());
  });
});
