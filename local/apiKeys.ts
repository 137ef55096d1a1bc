/** Local API keys: `<dataDir>/api-keys.json` ({client: key}), a development key made for each client lacking one. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientsConfig } from '../lib/clients/clientsConfig.ts';

export interface LocalKeys {
  file: string;
  keys: Record<string, string>;
  /** Clients that got a new development key just now. */
  created: string[];
}

/**
 * Makes sure every client of config/clients.json has a local key, keeping the ones already there.
 *
 * @example
 * const { file, keys } = ensureLocalKeys('.data'); // keys['example-dealer'] === 'dev-…'
 */
export const ensureLocalKeys = (dataDir: string): LocalKeys => {
  const file = join(dataDir, 'api-keys.json');
  const keys: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const created: string[] = [];
  for (const client of clientsConfig.clients) {
    if (keys[client.name]) continue;
    keys[client.name] = `dev-${randomBytes(18).toString('base64url')}`;
    created.push(client.name);
  }
  mkdirSync(dataDir, { recursive: true });
  if (created.length > 0) writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  return { file, keys, created };
};
