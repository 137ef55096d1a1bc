/**
 * A small summary per client of its webhook's tries, for the console's "Webhooks" page: the last success, the last
 * failure and the failures of each of the last 24 hours. One item `webhookSummary#<client>` in the records table,
 * written by the dispatcher after each call it made: one UpdateItem (under 1 KB: one write unit) per try, two for
 * the first failure of an hour (its hour's count starts again). Read with one GetItem per client.
 */
import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import { conditionally } from '../store/table.ts';

/** What the summary keeps of a client's webhook. */
export interface WebhookSummary {
  lastSuccessAt?: string;
  lastFailureAt?: string;
  /** Failed tries (an answer other than 2xx, or none) in the 24 hours before the read. */
  failuresLast24h: number;
}

/** Where the dispatcher notes its tries; the tests give their own, or none. */
export interface WebhookSummaries {
  noteTry(client: string, succeeded: boolean, at: Date): Promise<void>;
}

/** The records table's key of a client's webhook summary (no record id has a `#`). */
export const webhookSummaryKey = (client: string): string => `webhookSummary#${client}`;

/** The hour slot of a time (one per hour of the day, so 24 slots hold the last 24 hours) and the hour it holds. */
const slotOf = (at: Date) => {
  const hour = at.toISOString().slice(0, 13);
  const slot = hour.slice(11, 13);
  return { hour, count: `failCount${slot}`, of: `failHour${slot}` };
};

/**
 * The summaries in the records table (`RECORDS_TABLE`).
 *
 * @example
 * await tableWebhookSummaries().noteTry('example-dealer', false, new Date());
 */
export const tableWebhookSummaries = (table: () => string = recordsTable): WebhookSummaries => ({
  async noteTry(client, succeeded, at) {
    const Key = { pk: { S: webhookSummaryKey(client) } };
    if (succeeded) {
      await dynamoClient().send(
        new UpdateItemCommand({
          TableName: table(),
          Key,
          UpdateExpression: 'SET lastSuccessAt = :at',
          ExpressionAttributeValues: { ':at': { S: at.toISOString() } },
        }),
      );
      return;
    }
    const { hour, count, of } = slotOf(at);
    const values = { ':at': { S: at.toISOString() }, ':hour': { S: hour }, ':one': { N: '1' } };
    // The hour's slot already counts this hour: add one. Else (a slot of yesterday's hour, or none yet) start it.
    const added = await conditionally(
      dynamoClient().send(
        new UpdateItemCommand({
          TableName: table(),
          Key,
          UpdateExpression: 'SET lastFailureAt = :at, #count = #count + :one',
          ConditionExpression: '#of = :hour',
          ExpressionAttributeNames: { '#count': count, '#of': of },
          ExpressionAttributeValues: values,
        }),
      ),
    );
    if (added) return;
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: table(),
        Key,
        UpdateExpression: 'SET lastFailureAt = :at, #of = :hour, #count = :one',
        ExpressionAttributeNames: { '#count': count, '#of': of },
        ExpressionAttributeValues: values,
      }),
    );
  },
});

/**
 * A client's webhook summary as of `now`: the failures of the slots whose hour is within the last 24 hours.
 *
 * @example
 * await readWebhookSummary('example-dealer', new Date()) // { lastSuccessAt: '…', failuresLast24h: 3 }
 */
export const readWebhookSummary = async (client: string, now: Date): Promise<WebhookSummary> => {
  const out = await dynamoClient().send(
    new GetItemCommand({ TableName: recordsTable(), Key: { pk: { S: webhookSummaryKey(client) } } }),
  );
  const item = out.Item ?? {};
  // The current hour and the 23 before it.
  const oldest = new Date(now.getTime() - 23 * 3_600_000).toISOString().slice(0, 13);
  const current = now.toISOString().slice(0, 13);
  let failuresLast24h = 0;
  for (let h = 0; h < 24; h++) {
    const slot = String(h).padStart(2, '0');
    const hour = item[`failHour${slot}`]?.S;
    if (hour !== undefined && hour >= oldest && hour <= current)
      failuresLast24h += Number(item[`failCount${slot}`]?.N ?? 0);
  }
  return {
    ...(item.lastSuccessAt?.S ? { lastSuccessAt: item.lastSuccessAt.S } : {}),
    ...(item.lastFailureAt?.S ? { lastFailureAt: item.lastFailureAt.S } : {}),
    failuresLast24h,
  };
};
