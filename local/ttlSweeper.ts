/**
 * DynamoDB's TTL for `npm start`: dynalite has none (it answers DescribeTimeToLive with DISABLED and knows no
 * UpdateTimeToLive), so without this the local table would keep expired items (idempotency entries, records past
 * RECORD_RETENTION_DAYS) for ever. Like DynamoDB's own TTL process it scans the table and deletes the items whose
 * `expiresAt` (epoch seconds, the attribute serverless.yml's TimeToLiveSpecification names) has passed. Local only:
 * on AWS the table's TTL does this, and the service itself never scans.
 */
import { dynamoClient } from '../lib/aws/clients.ts';
import { DeleteItemCommand, ScanCommand } from '../lib/aws/jsonProtocol/dynamodb.ts';
import { positiveInteger } from '../lib/settings/parsers.ts';
import { recordsTable } from '../lib/settings/settings.ts';
import { conditionally, type Item } from '../lib/store/table.ts';

/** The TTL attribute of the records table (serverless.yml, TimeToLiveSpecification). */
export const TTL_ATTRIBUTE = 'expiresAt';

export interface SweepResult {
  /** Items deleted because their `expiresAt` had passed. */
  deleted: number;
}

/**
 * Deletes every item of the local records table whose `expiresAt` is before `now`, each with the condition that it
 * still is (an item written again meanwhile with a later `expiresAt` stays). `pageSize`: items a scan call reads
 * (default: DynamoDB's 1 MB page).
 *
 * @example
 * const { deleted } = await sweepExpiredItems({ now: new Date() });
 */
export const sweepExpiredItems = async (
  options: { now?: Date; pageSize?: number } = {},
): Promise<SweepResult> => {
  const nowSeconds = String(Math.floor((options.now ?? new Date()).getTime() / 1000));
  const TableName = recordsTable();
  let deleted = 0;
  let startKey: Item | undefined;
  do {
    const out = await dynamoClient().send(
      new ScanCommand({
        TableName,
        ProjectionExpression: 'pk',
        // A number attribute only, as DynamoDB's TTL: any other type never expires.
        FilterExpression: '#ttl < :now',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': { N: nowSeconds } },
        Limit: options.pageSize,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) {
      const removed = await conditionally(
        dynamoClient().send(
          new DeleteItemCommand({
            TableName,
            Key: { pk: item.pk },
            ConditionExpression: '#ttl < :now',
            ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':now': { N: nowSeconds } },
          }),
        ),
      );
      if (removed) deleted++;
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return { deleted };
};

/**
 * Sweeps at once and then every LOCAL_TTL_SWEEP_SECONDS (default 3600) until stopped; a failed sweep is logged and
 * the next one tries again.
 *
 * @example
 * const sweeper = startTtlSweeper({ log: (line) => process.stderr.write(`${line}\n`) });
 * await sweeper.stop();
 */
export const startTtlSweeper = (options: { log: (line: string) => void; env?: NodeJS.ProcessEnv }) => {
  const env = options.env ?? process.env;
  const seconds = positiveInteger('LOCAL_TTL_SWEEP_SECONDS', env.LOCAL_TTL_SWEEP_SECONDS, 3600);
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = running.then(async () => {
      try {
        const { deleted } = await sweepExpiredItems();
        if (deleted > 0) options.log(`TTL sweeper: deleted ${deleted} expired item(s)`);
      } catch (error) {
        options.log(`TTL sweeper: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  };
  sweep();
  const timer = setInterval(sweep, seconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
