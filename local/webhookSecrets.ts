/**
 * Local webhook secrets: `<dataDir>/webhook-secrets.json`, `{"<client>": "whsec_..."}` (during a rotation
 * `{"<client>": {"current", "previous", "rotatedAt"}}`), one made for each webhook client lacking one. The file of
 * earlier versions (keyed by secret name, `whsec-…` values) is replaced. Re-read when it changes, so that a
 * rotation by `npm run webhook-secret` reaches a running npm start.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  newWebhookSecret,
  parseWebhookSecrets,
  rotateWebhookSecrets,
  type StoredWebhookSecret,
  storedWebhookSecrets,
  type WebhookSecrets,
} from '../lib/webhooks/secrets.ts';

/** The file's name under the data directory. */
export const WEBHOOK_SECRETS_FILE = 'webhook-secrets.json';

export interface LocalWebhookSecrets {
  file: string;
  /** By client name. */
  secrets: Record<string, WebhookSecrets>;
  /** Clients that got a new secret just now. */
  created: string[];
  /** Entries of the old format that were dropped (secret names, or `whsec-` values). */
  replaced: string[];
}

const fileOf = (dataDir: string) => join(dataDir, WEBHOOK_SECRETS_FILE);

const readStored = (file: string): Record<string, unknown> => {
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`${file}: must be a JSON object {"<client>": "whsec_..."}`);
  return parsed as Record<string, unknown>;
};

const writeStored = (dataDir: string, stored: Record<string, StoredWebhookSecret>) => {
  mkdirSync(dataDir, { recursive: true });
  const file = fileOf(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
};

/** An entry of the old format: keyed by a secret name, or a `whsec-` value. */
const isOldFormat = (key: string, value: unknown) =>
  key.includes('/') || (typeof value === 'string' && value.startsWith('whsec-'));

/**
 * Makes sure every webhook client has a valid secret, keeping the ones there. Throws naming the client when a
 * value is not a valid `whsec_` secret.
 *
 * @example
 * const { secrets } = ensureWebhookSecrets('.data', ['example-dealer']);
 */
export const ensureWebhookSecrets = (dataDir: string, clients: Iterable<string>): LocalWebhookSecrets => {
  const file = fileOf(dataDir);
  const stored = readStored(file);
  const kept: Record<string, StoredWebhookSecret> = {};
  const secrets: Record<string, WebhookSecrets> = {};
  const replaced: string[] = [];
  for (const [key, value] of Object.entries(stored)) {
    if (isOldFormat(key, value)) {
      replaced.push(key);
      continue;
    }
    secrets[key] = parseWebhookSecrets(key, value, file);
    kept[key] = value as StoredWebhookSecret;
  }
  const created: string[] = [];
  for (const client of clients) {
    if (secrets[client]) continue;
    secrets[client] = { current: newWebhookSecret() };
    kept[client] = secrets[client].current;
    created.push(client);
  }
  if (created.length > 0 || replaced.length > 0) writeStored(dataDir, kept);
  return { file, secrets, created, replaced };
};

/**
 * Rotates a client's secret: a new one, the old one kept beside it with the rotation's time (it signs too for
 * WEBHOOK_ROTATION_HOURS).
 *
 * @example
 * rotateLocalWebhookSecret('.data', 'example-dealer', new Date()) // { current: 'whsec_…', previous: 'whsec_…', rotatedAt }
 */
export const rotateLocalWebhookSecret = (dataDir: string, client: string, now: Date): WebhookSecrets => {
  const file = fileOf(dataDir);
  const stored = readStored(file);
  const before = stored[client] === undefined ? undefined : parseWebhookSecrets(client, stored[client], file);
  const after = rotateWebhookSecrets(before, now);
  writeStored(dataDir, {
    ...(stored as Record<string, StoredWebhookSecret>),
    [client]: storedWebhookSecrets(after),
  });
  return after;
};

/**
 * The secrets of the file as they stand, re-read only when the file changed (npm start's signer and receiver).
 *
 * @example
 * const secretsOf = watchedWebhookSecrets('.data');
 * secretsOf('example-dealer') // { current: 'whsec_…' }
 */
export const watchedWebhookSecrets = (dataDir: string): ((client: string) => WebhookSecrets | undefined) => {
  const file = fileOf(dataDir);
  let seen: { mtimeMs: number; size: number; secrets: Record<string, WebhookSecrets> } | undefined;
  return (client) => {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (!seen || seen.mtimeMs !== stat.mtimeMs || seen.size !== stat.size) {
      const stored = readStored(file);
      const secrets: Record<string, WebhookSecrets> = {};
      for (const [key, value] of Object.entries(stored)) secrets[key] = parseWebhookSecrets(key, value, file);
      seen = { mtimeMs: stat.mtimeMs, size: stat.size, secrets };
    }
    return seen.secrets[client];
  };
};
