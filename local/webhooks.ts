/**
 * Events and webhooks in npm start, around the real dispatcher (functions/webhookDispatcher.ts, which the local
 * runner invokes from the webhook queue as Lambda's event source would): the local event bus routing by the stack's
 * rules, the local Secrets Manager holding each client's webhook secret, and the sandbox webhook receiver standing
 * in for the clients' remote webhooks.
 */
import { clientsConfig } from '../lib/clients/clientsConfig.ts';
import type { Client } from '../lib/clients/types.ts';
import { storedWebhookSecrets } from '../lib/webhooks/secrets.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../sandbox/webhookReceiver.ts';
import { type LocalEventBus, startLocalEventBus } from './eventBus.ts';
import { startLocalSecretsManager } from './secretsManager.ts';
import { describeWebhookRoutes, localWebhookRoutes, redirectWebhookCalls } from './webhookRoutes.ts';
import { ensureWebhookSecrets, watchedWebhookSecrets } from './webhookSecrets.ts';

export interface LocalWebhooks {
  bus: LocalEventBus;
  receiver: WebhookReceiver;
  /**
   * For the handlers, the dispatcher and runner.json: AWS_ENDPOINT_URL_EVENTBRIDGE,
   * AWS_ENDPOINT_URL_SECRETS_MANAGER, LOCAL_WEBHOOK_RECEIVER_URL.
   */
  env: Record<string, string>;
  /** What to print at start: the receiver, and where each client's webhook goes. */
  lines: string[];
  /** Serves each client's secret as `<prefix><client>` (the dispatcher's WEBHOOK_SECRETS_PREFIX). */
  useSecretsPrefix(prefix: string): void;
  stop(): Promise<void>;
}

/**
 * Starts the receiver, the local Secrets Manager and the bus on `dataDir` (once the data directory is this
 * process's: the secrets live there), and sends this process's calls of remote webhooks to the receiver.
 *
 * @example
 * const webhooks = await startLocalWebhooks({ dataDir: '.data' });
 * webhooks.bus.answerTo(['dealer-gateway-local']);
 */
export const startLocalWebhooks = async (options: {
  dataDir: string;
  clients?: Client[];
  busNames?: string[];
  /** Default: LOCAL_WEBHOOKS=direct in the environment. */
  direct?: boolean;
}): Promise<LocalWebhooks> => {
  const clients = options.clients ?? clientsConfig.clients;
  const webhookClients = clients.filter((client) => client.webhook).map((client) => client.name);
  // Refuses an invalid secret now, naming the client; makes the missing ones.
  ensureWebhookSecrets(options.dataDir, webhookClients);
  const secretsOf = watchedWebhookSecrets(options.dataDir);
  const receiver = await startWebhookReceiver({
    dataDir: options.dataDir,
    // The receiver stands in for the client, which knows its current secret.
    secretsOf: (client) => {
      const secrets = webhookClients.includes(client) ? secretsOf(client) : undefined;
      return secrets ? [secrets.current] : undefined;
    },
  });
  const stops: (() => Promise<void> | void)[] = [() => receiver.stop()];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const routes = localWebhookRoutes({
      clients,
      receiverUrl: receiver.url,
      direct: options.direct ?? process.env.LOCAL_WEBHOOKS === 'direct',
    });
    stops.push(redirectWebhookCalls(routes));
    let prefix: string | undefined;
    const secrets = await startLocalSecretsManager((name) => {
      if (prefix === undefined || !name.startsWith(prefix)) return undefined;
      const client = name.slice(prefix.length);
      const found = webhookClients.includes(client) ? secretsOf(client) : undefined;
      if (!found) return undefined;
      // As `npm run webhook-secret -- rotate --stage` stores it: the secret, or JSON during a rotation.
      const stored = storedWebhookSecrets(found);
      return typeof stored === 'string' ? stored : JSON.stringify(stored);
    });
    stops.push(() => secrets.stop());
    const bus = await startLocalEventBus({ busNames: options.busNames });
    stops.push(() => bus.stop());
    return {
      bus,
      receiver,
      env: {
        AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
        LOCAL_WEBHOOK_RECEIVER_URL: receiver.url,
      },
      lines: [
        `webhook receiver (sandbox): ${receiver.url}/hooks (what arrived: GET ${receiver.url}/hooks/<client>)`,
        describeWebhookRoutes(routes),
      ],
      useSecretsPrefix(value) {
        prefix = value;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
