/**
 * Where npm start sends each client's webhook events: a webhook on this machine (localhost / 127.0.0.1) is called
 * as declared; any other goes to the sandbox webhook receiver (`<receiver>/hooks/<client>`), so that a local run
 * never posts to a real dealer system, unless LOCAL_WEBHOOKS=direct.
 */

import type { Client } from '../lib/clients/types.ts';
import { DEFAULT_WEBHOOK_RATE_LIMIT, isLocalWebhookUrl } from '../lib/clients/webhookRules.cjs';
import type { WebhookRoute } from './webhookDispatcher.ts';

/** A client's route, and what it was declared as (for the start-up line). */
export interface LocalWebhookRoute extends WebhookRoute {
  client: string;
  declaredUrl: string;
  /** `declared`: the URL as configured; `receiver`: the sandbox webhook receiver stands in for it. */
  via: 'declared' | 'receiver';
}

export interface LocalWebhookRoutesInput {
  clients: Client[];
  /** The sandbox webhook receiver's URL. */
  receiverUrl: string;
  /** LOCAL_WEBHOOKS=direct: call every declared URL, remote ones too. */
  direct?: boolean;
}

/**
 * The route of every client that declares a webhook, by client name.
 *
 * @example
 * localWebhookRoutes({ clients, receiverUrl: 'http://127.0.0.1:4100' }).get('example-dealer')?.url;
 * // 'http://127.0.0.1:4100/hooks/example-dealer' (its declared URL is not on this machine)
 */
export const localWebhookRoutes = (input: LocalWebhookRoutesInput): Map<string, LocalWebhookRoute> => {
  const routes = new Map<string, LocalWebhookRoute>();
  for (const client of input.clients) {
    const webhook = client.webhook;
    if (!webhook) continue;
    const asDeclared = input.direct || isLocalWebhookUrl(webhook.url);
    routes.set(client.name, {
      client: client.name,
      declaredUrl: webhook.url,
      via: asDeclared ? 'declared' : 'receiver',
      url: asDeclared ? webhook.url : `${input.receiverUrl}/hooks/${client.name}`,
      rateLimitPerSecond: webhook.rateLimitPerSecond ?? DEFAULT_WEBHOOK_RATE_LIMIT,
    });
  }
  return routes;
};

/**
 * One line for the start-up output: where each client's webhook events go.
 *
 * @example
 * describeWebhookRoutes(routes);
 * // 'webhooks: example-dealer → http://127.0.0.1:4100/hooks/example-dealer (sandbox receiver for https://…)'
 */
export const describeWebhookRoutes = (routes: Map<string, LocalWebhookRoute>): string => {
  if (routes.size === 0) return 'webhooks: no client declares one (config/clients.json)';
  const each = [...routes.values()].map((route) =>
    route.via === 'declared'
      ? `${route.client} → ${route.url}`
      : `${route.client} → ${route.url} (sandbox receiver for ${route.declaredUrl}; LOCAL_WEBHOOKS=direct calls it)`,
  );
  return `webhooks: ${each.join('; ')}`;
};
