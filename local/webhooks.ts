/**
 * Events and webhooks in npm start: the local webhook secrets, the sandbox webhook receiver and the local event
 * bus routing each client's events to its webhook (or to the receiver standing in for it).
 */
import { clientsConfig } from '../lib/clients/clientsConfig.ts';
import type { Client } from '../lib/clients/types.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../sandbox/webhookReceiver.ts';
import { type LocalEventBus, startLocalEventBus } from './eventBus.ts';
import { fileWebhookSwitch } from './webhookFlags.ts';
import { describeWebhookRoutes, localWebhookRoutes } from './webhookRoutes.ts';
import { ensureWebhookSecrets, watchedWebhookSecrets } from './webhookSecrets.ts';

export interface LocalWebhooks {
  bus: LocalEventBus;
  receiver: WebhookReceiver;
  /** For the handlers, the worker and runner.json: AWS_ENDPOINT_URL_EVENTBRIDGE, LOCAL_WEBHOOK_RECEIVER_URL. */
  env: Record<string, string>;
  /** What to print at start: the receiver, and where each client's webhook goes. */
  lines: string[];
  stop(): Promise<void>;
}

/**
 * Starts the receiver and the bus on `dataDir` (call it once the data directory is this process's: the bus
 * resumes the deliveries left pending there).
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
  try {
    const routes = localWebhookRoutes({
      clients,
      receiverUrl: receiver.url,
      direct: options.direct ?? process.env.LOCAL_WEBHOOKS === 'direct',
    });
    const bus = await startLocalEventBus({
      dataDir: options.dataDir,
      busNames: options.busNames,
      routeOf: (client) => routes.get(client),
      secretsOf,
      flags: fileWebhookSwitch(options.dataDir),
    });
    return {
      bus,
      receiver,
      env: { AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url, LOCAL_WEBHOOK_RECEIVER_URL: receiver.url },
      lines: [
        `webhook receiver (sandbox): ${receiver.url}/hooks (what arrived: GET ${receiver.url}/hooks/<client>)`,
        describeWebhookRoutes(routes),
      ],
      async stop() {
        await bus.stop();
        await receiver.stop();
      },
    };
  } catch (error) {
    await receiver.stop();
    throw error;
  }
};
