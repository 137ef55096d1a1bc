/**
 * Where npm start sends each client's webhook events: a webhook on this machine (localhost / 127.0.0.1) is called
 * as declared; any other goes to the sandbox webhook receiver (`<receiver>/hooks/<client>`), so that a local run
 * never posts to a real dealer system, unless LOCAL_WEBHOOKS=direct. The dispatcher (functions/webhookDispatcher.ts)
 * posts to the URL config/clients.json declares, as on AWS; `redirectWebhookCalls` stands in for the network and
 * takes such a call to the receiver instead.
 */

import type { Client } from '../lib/clients/types.ts';
import { DEFAULT_WEBHOOK_RATE_LIMIT, isLocalWebhookUrl } from '../lib/clients/webhookRules.cjs';

/** Where a client's events go, and how to call it. */
export interface WebhookRoute {
  /** The URL actually called (the declared one, or the sandbox receiver's `/hooks/<client>`). */
  url: string;
  /** Roughly how many calls a second this webhook gets at most. */
  rateLimitPerSecond: number;
}

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

/**
 * Makes this process's `fetch` call the sandbox receiver instead of each declared webhook URL the routes send
 * there (only those exact URLs; every other call is left alone). Returns what undoes it.
 *
 * @example
 * const undo = redirectWebhookCalls(routes);
 * await fetch('https://dealer-1234.example.com/dealer-gateway/events', init); // reaches <receiver>/hooks/example-dealer
 * undo();
 */
export const redirectWebhookCalls = (routes: Map<string, LocalWebhookRoute>): (() => void) => {
  const redirects = new Map(
    [...routes.values()]
      .filter((route) => route.via === 'receiver')
      .map((route) => [route.declaredUrl, route.url]),
  );
  const original = globalThis.fetch;
  const redirected: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const target = url === undefined ? undefined : redirects.get(url);
    return original(target ?? input, init);
  };
  globalThis.fetch = redirected;
  return () => {
    if (globalThis.fetch === redirected) globalThis.fetch = original;
  };
};
