import type { APIGatewayProxyResult } from 'aws-lambda';
import { clientsConfig } from '../clients/clientsConfig.ts';
import { jsonResponse } from '../http/responses.ts';
import { tableWebhookSwitch } from '../webhooks/disabledWebhooks.ts';
import { readWebhookSummary } from '../webhooks/webhookSummary.ts';

/**
 * The host of a webhook's URL, and nothing else of it: a path or query may carry a client's token.
 *
 * @example
 * hostOf('https://dealer-1234.example.com/dealer-gateway/events?token=s3cr3t') // 'dealer-1234.example.com'
 */
export const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
};

/**
 * `GET /console/api/webhooks`: each client with a webhook (config/clients.json): its host, whether it is enabled
 * (lib/webhooks/disabledWebhooks.ts), its last success and failure and its failures in the last 24 hours (the
 * dispatcher's summary, lib/webhooks/webhookSummary.ts). Two GetItems per client.
 *
 * @example
 * await webhooksAnswer(new Date()) // 200 {"webhooks":[{"client":"example-dealer","host":"dealer-1234.example.com","enabled":true,"failuresLast24h":0}]}
 */
export const webhooksAnswer = async (now: Date = new Date()): Promise<APIGatewayProxyResult> => {
  const flags = tableWebhookSwitch();
  const clients = clientsConfig.clients.filter((client) => client.webhook);
  const webhooks = await Promise.all(
    clients.map(async (client) => {
      const [disabled, summary] = await Promise.all([
        flags.disabled(client.name),
        readWebhookSummary(client.name, now),
      ]);
      return {
        client: client.name,
        host: hostOf(client.webhook?.url ?? ''),
        enabled: disabled === undefined,
        ...summary,
      };
    }),
  );
  return jsonResponse(200, { webhooks });
};
