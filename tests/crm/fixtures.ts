import type { CrmClient, CrmConfig } from '../../lib/downstream/crm/index.ts';
import { createCrmClient } from '../../lib/downstream/crm/index.ts';
import type { CaseRecord } from '../../lib/types.ts';
import {
  type SalesforceSandbox,
  type SalesforceSandboxOptions,
  startSalesforceSandbox,
} from '../../sandbox/salesforceSandbox.ts';

/** A full case; personal values are distinctive so tests can look for leaks. */
export const fullCase = (overrides: Partial<CaseRecord> = {}): CaseRecord => ({
  title: 'Ms',
  firstName: 'Aroha',
  surname: 'Ngata-Whitfield',
  email: 'aroha.ngata@example.org',
  mobile: '021 555 0199',
  homePhone: '09 555 0123',
  addressPostcode: '1010',
  privacyConsent: true,
  subscribeToBrand: false,
  ownBrand: true,
  siteName: 'Motorcycles',
  comments: 'Rear brake squeals after the first service.',
  origin: 'service-form',
  frameNo: 'JH2RC5000MK000001',
  ...overrides,
});

/** Only the required fields. */
export const minimalCase = (overrides: Partial<CaseRecord> = {}): CaseRecord => ({
  firstName: 'Aroha',
  surname: 'Ngata-Whitfield',
  email: 'aroha.ngata@example.org',
  ...overrides,
});

/** Personal values of {@link fullCase}: none may appear in an error text. */
export const PERSONAL_VALUES = [
  'Aroha',
  'Ngata-Whitfield',
  'aroha.ngata@example.org',
  '021 555 0199',
  '09 555 0123',
];

export interface CrmFixture {
  sf: SalesforceSandbox;
  crm: CrmClient;
  config: CrmConfig;
}

/** A Salesforce sandbox on a free port and an adapter pointed at it. */
export async function startCrm(
  overrides: Partial<CrmConfig> = {},
  sandboxOptions: SalesforceSandboxOptions = {},
): Promise<CrmFixture> {
  const sf = await startSalesforceSandbox(sandboxOptions);
  const config: CrmConfig = {
    baseUrl: sf.url,
    clientId: sf.clientId,
    clientSecret: sf.clientSecret,
    timeoutMs: 1000,
    ...overrides,
  };
  return { sf, crm: createCrmClient(config), config };
}

/** The sandbox's log as `METHOD path status` lines. */
export const requestLines = (sf: SalesforceSandbox): string[] =>
  sf.requests.map(({ method, path, status }) => `${method} ${path} ${status}`);

export const TOKEN = '/services/oauth2/token';
export const upsertPath = (crmId: string, field = 'Web_Case_Id__c', version = 'v66.0') =>
  `/services/data/${version}/sobjects/Case/${field}/${encodeURIComponent(crmId)}`;

/** The Salesforce body the default mapping makes of fullCase(): every row of the contract's table. */
export const fullCaseSalesforceBody = {
  SuppliedName: 'Aroha Ngata-Whitfield',
  SuppliedEmail: 'aroha.ngata@example.org',
  SuppliedPhone: '021 555 0199',
  Description: 'Rear brake squeals after the first service.',
  Origin: 'Web',
  Title__c: 'Ms',
  First_Name__c: 'Aroha',
  Last_Name__c: 'Ngata-Whitfield',
  Mobile__c: '021 555 0199',
  Home_Phone__c: '09 555 0123',
  Postcode__c: '1010',
  Privacy_Consent__c: true,
  Subscribe_To_Brand__c: false,
  Own_Brand__c: true,
  Site_Name__c: 'Motorcycles',
  Origin_Detail__c: 'service-form',
  Frame_Number__c: 'JH2RC5000MK000001',
};
