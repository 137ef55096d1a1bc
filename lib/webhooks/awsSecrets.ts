/** A client's webhook secrets on AWS: the Secrets Manager secret `<WEBHOOK_SECRETS_PREFIX><client>`, cached. */
import { SecretProvider } from '../clients/secretProvider.ts';
import type { Environment } from '../settings/environment.ts';
import { webhookSecretsPrefix } from '../settings/settings.ts';
import { parseWebhookSecrets, type WebhookSecrets } from './secrets.ts';

/** How long a read secret is reused (a rotation reaches the dispatcher within it; the window is hours). */
const SECRET_MAX_AGE_SECONDS = 300;

let provider: SecretProvider | undefined;

/**
 * The name of a client's webhook secret for a stage: `<service>/<stage>/webhooks/<client>` (deploy/webhooks.cjs
 * passes the prefix as WEBHOOK_SECRETS_PREFIX; the rotation command writes there).
 *
 * @example
 * webhookSecretName('example-dealer', { WEBHOOK_SECRETS_PREFIX: 'dealer-gateway/prod/webhooks/' })
 * // 'dealer-gateway/prod/webhooks/example-dealer'
 */
export const webhookSecretName = (client: string, env?: Environment): string =>
  `${webhookSecretsPrefix(env)}${client}`;

/**
 * Reads and checks a client's secrets (Powertools Parameters' cache, 5 minutes). Throws naming the client when
 * the value is not a valid `whsec_` secret (the event then waits for its next try).
 *
 * @example
 * const secrets = await loadAwsWebhookSecrets('example-dealer');
 */
export const loadAwsWebhookSecrets = async (client: string): Promise<WebhookSecrets> => {
  provider ??= new SecretProvider();
  const name = webhookSecretName(client);
  const text = (await provider.get(name, { maxAge: SECRET_MAX_AGE_SECONDS })) as string | undefined;
  if (text === undefined) throw new Error(`secret ${name}: no value (webhook of client "${client}")`);
  const stored = text.trimStart().startsWith('{') ? JSON.parse(text) : text.trim();
  return parseWebhookSecrets(client, stored, `secret ${name}`);
};
