/** Local webhook secrets: `<dataDir>/webhook-secrets.json` ({secretName: value}), a random one made for each name lacking one. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LocalWebhookSecrets {
  file: string;
  /** By secret name (as config/clients.json names it in `webhook.secretName`). */
  secrets: Record<string, string>;
  /** Names that got a new value just now. */
  created: string[];
}

/**
 * Makes sure every secret name has a local value, keeping the ones already there. The local event bus sends it
 * in the webhook secret header and the sandbox webhook receiver checks it; on AWS the value lives in Secrets
 * Manager under the same name.
 *
 * @example
 * const { secrets } = ensureWebhookSecrets('.data', ['dealer-gateway/local/webhooks/example-dealer']);
 */
export const ensureWebhookSecrets = (dataDir: string, names: Iterable<string>): LocalWebhookSecrets => {
  const file = join(dataDir, 'webhook-secrets.json');
  const secrets: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const created: string[] = [];
  for (const name of names) {
    if (secrets[name]) continue;
    secrets[name] = `whsec-${randomBytes(24).toString('base64url')}`;
    created.push(name);
  }
  mkdirSync(dataDir, { recursive: true });
  if (created.length > 0) writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return { file, secrets, created };
};
