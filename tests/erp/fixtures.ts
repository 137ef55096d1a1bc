import type { ErpClient, ErpConfig } from '../../lib/downstream/erp/index.ts';
import { createErpClient } from '../../lib/downstream/erp/index.ts';
import type { SalesRegistration } from '../../lib/types.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';

/** A valid registration; personal values are distinctive so tests can look for leaks. */
export const registration = (overrides: Partial<SalesRegistration> = {}): SalesRegistration => ({
  DealerId: 1234,
  FrameNum: 'JH2RC5000MK000001',
  Model: 'CB500F',
  SaleDate: '2025-03-14',
  Name: 'Marchetti',
  Name2: 'Giulietta',
  Street: '12 Harbour Parade',
  Town: 'Sydney',
  Postcode: '2000',
  email: 'giulietta.marchetti@example.com',
  Phone: '0412 555 019',
  CommPriv: 'P',
  MoreInfo: 'N',
  AllowSharing: 'Y',
  DOB: '1988-07-02',
  ...overrides,
});

/** Personal values of {@link registration}: none may appear in an error text. */
export const PERSONAL_VALUES = [
  'Marchetti',
  'Giulietta',
  '12 Harbour Parade',
  'giulietta.marchetti@example.com',
  '0412 555 019',
];

export interface ErpFixture {
  sap: SapSandbox;
  erp: ErpClient;
  config: ErpConfig;
}

/** A SAP sandbox on a free port and an adapter pointed at it. */
export async function startErp(overrides: Partial<ErpConfig> = {}): Promise<ErpFixture> {
  const sap = await startSapSandbox();
  const config: ErpConfig = {
    baseUrl: sap.url,
    servicePath: sap.servicePath,
    username: sap.username,
    password: sap.password,
    timeoutMs: 1000,
    ...overrides,
  };
  return { sap, erp: createErpClient(config), config };
}

/** The sandbox's log as `METHOD path status` lines, without the query string. */
export const requestLines = (sap: SapSandbox): string[] =>
  sap.requests.map(({ method, path, status }) => `${method} ${path.split('?')[0]} ${status}`);

export const SERVICE_ROOT = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/';
export const ENTITY_SET = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';
