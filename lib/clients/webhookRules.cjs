// The rules for a client's `webhook` in config/clients.json, in one place for both readers of that file: the
// handlers (lib/clients/clientsConfig.ts, at module load) and packaging (deploy/apiKeys.cjs, deploy/webhooks.cjs),
// which runs under whatever Node runs the serverless CLI and so cannot import TypeScript. Plain CommonJS without
// dependencies: esbuild bundles it into the functions, Node imports its named exports from ESM.
'use strict';

/** A webhook's calls per second by default, and the most it may ask for. */
const DEFAULT_WEBHOOK_RATE_LIMIT = 10;
const MAX_WEBHOOK_RATE_LIMIT = 300;

/** The fields a webhook may have (anything else is a typo that would otherwise be ignored silently). */
const WEBHOOK_FIELDS = ['url', 'rateLimitPerSecond'];

/** Hosts for which plain http:// is allowed: npm start's own machine, never reachable from AWS. */
const LOCAL_HOSTS = ['localhost', '127.0.0.1'];

/**
 * Whether a (valid) webhook URL points at this machine: npm start delivers to it, AWS cannot.
 *
 * @example
 * isLocalWebhookUrl('http://localhost:4010/events') // true
 */
const isLocalWebhookUrl = (url) => LOCAL_HOSTS.includes(new URL(url).hostname);

/**
 * The first problem of one client's webhook, naming the client and the field, or undefined when it is fine (or
 * the client declares none).
 *
 * @example
 * webhookProblem({ name: 'example-dealer', webhook: { url: 'ftp://x' } })
 * // 'client "example-dealer": webhook.url "ftp://x" must be an https:// URL (http:// only for localhost)'
 */
const webhookProblem = (client) => {
  const webhook = client.webhook;
  if (webhook === undefined) return undefined;
  const where = `client "${client.name}"`;
  if (webhook === null || typeof webhook !== 'object' || Array.isArray(webhook))
    return `${where}: webhook must be an object {"url", "rateLimitPerSecond"?}`;
  // The secret is no longer named here: it is one per client and stage (<service>/<stage>/webhooks/<client>).
  if ('secretName' in webhook)
    return `${where}: webhook.secretName is no longer used: the webhook's whsec_ secret is kept per stage (Secrets Manager <service>/<stage>/webhooks/${client.name}; npm run webhook-secret -- rotate ${client.name})`;
  const unknown = Object.keys(webhook).find((field) => !WEBHOOK_FIELDS.includes(field));
  if (unknown !== undefined)
    return `${where}: webhook.${unknown} is not a webhook field (${WEBHOOK_FIELDS.join(', ')})`;
  const { url, rateLimitPerSecond } = webhook;
  if (typeof url !== 'string' || !URL.canParse(url))
    return `${where}: webhook.url ${JSON.stringify(url)} is not a URL`;
  const parsed = new URL(url);
  const secure =
    parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOCAL_HOSTS.includes(parsed.hostname));
  if (!secure) return `${where}: webhook.url "${url}" must be an https:// URL (http:// only for localhost)`;
  // Credentials in the URL would land in the template and in logs; the receiver checks the signature instead.
  if (parsed.username || parsed.password)
    return `${where}: webhook.url must not carry a user name or password (the receiver verifies the signature)`;
  if (
    rateLimitPerSecond !== undefined &&
    !(
      Number.isInteger(rateLimitPerSecond) &&
      rateLimitPerSecond >= 1 &&
      rateLimitPerSecond <= MAX_WEBHOOK_RATE_LIMIT
    )
  )
    return `${where}: webhook.rateLimitPerSecond ${JSON.stringify(rateLimitPerSecond)} must be an integer from 1 to ${MAX_WEBHOOK_RATE_LIMIT}`;
  return undefined;
};

module.exports = {
  DEFAULT_WEBHOOK_RATE_LIMIT,
  MAX_WEBHOOK_RATE_LIMIT,
  isLocalWebhookUrl,
  webhookProblem,
};
