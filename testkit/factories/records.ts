/** Test factories: valid records that tests change one field at a time. */
import { fieldClass } from '../../lib/privacy/fieldClassification.ts';

/** A valid sales registration as a dealer system sends it. */
export const salesRegistrationInput = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  DealerId: 1234,
  FrameNum: 'JH2PC40A1XM000001',
  Model: 'CBR650R',
  SaleDate: '2026-11-20',
  Name: 'Testperson',
  Name2: 'Alexandra',
  Street: '1 Sample Street',
  Town: 'Exampleton',
  Postcode: '2000',
  email: 'alexandra.testperson@example.com',
  Phone: '+61 400 000 001',
  CommPriv: 'P',
  ...overrides,
});

/** A valid case as a web form sends it. */
export const caseInput = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  title: 'Ms',
  firstName: 'Bernadette',
  surname: 'Caseperson',
  email: 'bernadette.caseperson@example.com',
  mobile: '+61 400 000 002',
  addressPostcode: '3000',
  privacyConsent: true,
  comments: 'Please call me about a service.',
  ...overrides,
});

/** A fresh unique frame number, so that records of different tests never look like duplicates. */
export const uniqueFrame = (prefix = 'TST'): string =>
  `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`.toUpperCase().slice(0, 30);

/**
 * The fields of the records above that hold personal data: every field the one classification
 * (lib/privacy/fieldClassification.ts) does not class `kept`.
 */
export const personalFields: string[] = [
  ...new Set(
    [salesRegistrationInput(), caseInput()].flatMap((record, index) =>
      Object.keys(record).filter(
        (field) => fieldClass(index === 0 ? 'salesRegistration' : 'caseRecord', field) !== 'kept',
      ),
    ),
  ),
];

/** Shorter values ('2000', 'Ms') would be found by chance in a whole run's output; tests/retention plants longer ones. */
const MIN_SCANNED_LENGTH = 6;

/**
 * Every personal value the factories put in records (of at least MIN_SCANNED_LENGTH characters). The test run fails
 * when any of them appears in the output of a test worker (testkit/logCapture.ts, checked at the end by
 * testkit/globalSetup.ts).
 */
export const personalValues: string[] = [
  ...new Set(
    [salesRegistrationInput(), caseInput()].flatMap((record) =>
      personalFields.flatMap((field) =>
        typeof record[field] === 'string' && (record[field] as string).length >= MIN_SCANNED_LENGTH
          ? [record[field] as string]
          : [],
      ),
    ),
  ),
];
