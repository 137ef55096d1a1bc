import type { SalesRegistration } from '../../types.ts';
import type { PersonalValueKind } from '../errorText.ts';

/** Entity set of the custom SAP Gateway service that registers sales. */
export const DEFAULT_ERP_SERVICE_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';

/** CONTRACT section 3: at most this many registrations in one `$batch` call unless ERP_BATCH_SIZE says otherwise. */
export const DEFAULT_ERP_BATCH_SIZE = 50;

/** ERP_BATCH_SIZE may not exceed this: SAP Gateway limits the operations of one `$batch`, and a call times out as a whole. */
export const MAX_ERP_BATCH_SIZE = 1000;

/** CONTRACT section 3: downstream timeouts are 10 s. */
export const DEFAULT_ERP_TIMEOUT_MS = 10_000;

/**
 * Fields of a registration that identify a person: names, address, e-mail, phone, date of birth. SAP messages
 * sometimes echo the values they complain about, so these values are blanked out of every error text before it
 * leaves the adapter (safeErrorText reads each value's kind off its shape: a date, an address, a phone number).
 */
export const PERSONAL_FIELDS = {
  Name: 'name',
  Name2: 'name',
  CompanyName: 'text',
  Street: 'text',
  Floor: 'text',
  Town: 'text',
  Postcode: 'text',
  State: 'text',
  email: 'email',
  Phone: 'phone',
  DOB: 'date',
  // The dealer's staff member who made the sale: a person's name.
  Operator: 'name',
} as const satisfies Partial<Record<keyof SalesRegistration, PersonalValueKind>>;
