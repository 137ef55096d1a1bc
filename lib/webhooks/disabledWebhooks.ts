/**
 * Which clients' webhooks are disabled: a `410 Gone` turns a client's webhook off until an operator enables it
 * again (`npm run webhook-secret -- enable <client>`). On AWS a flag item `webhook#<client>` in the records table.
 */
import { dynamoClient } from '../aws/clients.ts';
import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';

/** Why and since when a client's webhook is off. */
export interface WebhookDisabled {
  at: string;
  status: number;
}

/** Where the disabled flags are kept (DynamoDB on AWS, a file in npm start). */
export interface WebhookSwitch {
  disabled(client: string): Promise<WebhookDisabled | undefined>;
  disable(client: string, reason: WebhookDisabled): Promise<void>;
  /** True when the webhook was disabled. */
  enable(client: string): Promise<boolean>;
}

/** The records table's key of a client's webhook flag (no record id has a `#`). */
export const webhookFlagKey = (client: string): string => `webhook#${client}`;

/**
 * The flags in the records table (`RECORDS_TABLE`), one item per disabled client.
 *
 * @example
 * const flags = tableWebhookSwitch();
 * if (await flags.disabled('example-dealer')) return; // dropped: the client catches up from GET /events
 */
export const tableWebhookSwitch = (table: () => string = recordsTable): WebhookSwitch => ({
  async disabled(client) {
    const out = await dynamoClient().send(
      new GetItemCommand({
        TableName: table(),
        Key: { pk: { S: webhookFlagKey(client) } },
        ConsistentRead: true,
      }),
    );
    const item = out.Item;
    if (!item) return undefined;
    return { at: item.webhookDisabledAt?.S ?? '', status: Number(item.webhookDisabledStatus?.N ?? 410) };
  },
  async disable(client, reason) {
    await dynamoClient().send(
      new PutItemCommand({
        TableName: table(),
        Item: {
          pk: { S: webhookFlagKey(client) },
          webhookDisabledAt: { S: reason.at },
          webhookDisabledStatus: { N: String(reason.status) },
        },
      }),
    );
  },
  async enable(client) {
    const out = await dynamoClient().send(
      new DeleteItemCommand({
        TableName: table(),
        Key: { pk: { S: webhookFlagKey(client) } },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes !== undefined;
  },
});
