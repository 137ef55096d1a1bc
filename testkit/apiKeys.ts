import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetLocalKeys } from '../lib/clients/apiKeys.ts';
import { resetSettings } from '../lib/settings/environment.ts';

/** Keys of the clients in config/clients.json, for tests. */
export const testKeys = {
  dealer: 'test-key-example-dealer',
  webForms: 'test-key-example-web-forms',
  /** The test-mode client (`"mode": "test"`), bound to the dealer's dealers. */
  testDealer: 'test-key-example-dealer-test',
} as const;

/** Writes the test keys where the service reads local keys (API_KEYS_FILE), as npm start does. */
export const useTestKeys = (): void => {
  const file = join(tmpdir(), `dealer-gateway-keys-${process.pid}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      'example-dealer': testKeys.dealer,
      'example-web-forms': testKeys.webForms,
      'example-dealer-test': testKeys.testDealer,
    }),
  );
  process.env.API_KEYS_FILE = file;
  resetSettings();
  forgetLocalKeys();
};

/** The key a test request to this path carries by default: the dealer's for sales, the web forms' for cases. */
export const defaultKeyFor = (path: string): string =>
  path.startsWith('/crm') ? testKeys.webForms : testKeys.dealer;

/** The content id key every test runs with (vitest.config.ts sets CONTENT_ID_KEY, as npm start does locally). */
export const CONTENT_ID_KEY = process.env.CONTENT_ID_KEY ?? 'test-content-id-key';
