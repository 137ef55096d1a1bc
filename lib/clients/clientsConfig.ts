import config from '../../config/clients.json' with { type: 'json' };
import type { ClientsConfig } from './types.ts';
import { webhookProblem } from './webhookRules.cjs';

const fail = (what: string): never => {
  throw new Error(`config/clients.json: ${what}`);
};

/**
 * Checks the clients configuration: unique names, a mode of `live` or `test`, dealer numbers of 4 or 6 digits, webhooks (the rules packaging
 * applies too: ./webhookRules.cjs), origins as `scheme://host[:port]`. Run at module load (and by the tests), so a
 * bad file never deploys quietly.
 *
 * @example
 * checkClientsConfig({ clients: [{ name: 'a', dealers: [], webhook: { url: 'ftp://x' } }], browserForms })
 * // throws: config/clients.json: client "a": webhook.url "ftp://x" must be an https:// URL (http:// only for localhost)
 */
export const checkClientsConfig = (candidate: ClientsConfig): ClientsConfig => {
  const names = new Set<string>();
  for (const client of candidate.clients) {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(client.name))
      fail(`client name "${client.name}" must be lower-case letters, digits and -`);
    if (names.has(client.name)) fail(`client "${client.name}" is declared twice`);
    if (client.mode !== undefined && client.mode !== 'live' && client.mode !== 'test')
      fail(`client "${client.name}": mode "${String(client.mode)}" must be "live" or "test"`);
    names.add(client.name);
    for (const dealer of client.dealers) {
      const ok =
        Number.isInteger(dealer) &&
        ((dealer >= 1000 && dealer <= 9999) || (dealer >= 100000 && dealer <= 999999));
      if (!ok)
        fail(
          `client "${client.name}": dealer ${dealer} is neither a 4-digit dealer nor a 6-digit business-partner number`,
        );
    }
    const problem = webhookProblem(client);
    if (problem) fail(problem);
  }
  for (const origin of candidate.browserForms.allowedOrigins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin)
      fail(`browserForms origin "${origin}" must be scheme://host[:port]`);
  }
  return candidate;
};

/** The configured clients, bundled with the functions (config, not code: edit config/clients.json). */
export const clientsConfig: ClientsConfig = checkClientsConfig(config as ClientsConfig);

/** A client by name. */
export const clientNamed = (name: string, from: ClientsConfig = clientsConfig) =>
  from.clients.find((c) => c.name === name);
