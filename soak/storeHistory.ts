/**
 * What the store of a running `npm start` says about records beyond their status look-up: every state a record
 * passed through (its history) and what waits in the dead-letter queues. Read through the endpoints the runner
 * wrote to `<DATA_DIR>/runner.json`, as `npm run records` and `npm run redrive` do.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from '../local/aws.ts';

/** One status record's path: its current status and every status its history names, oldest first. */
export interface RecordPath {
  id: string;
  status: string;
  attempts: number;
  /** Tries spent (claims for delivery since acceptance; a failed probe's is given back). */
  tries: number;
  /** The statuses of its history entries, oldest first. */
  statuses: string[];
}

interface RunnerFile {
  dynamoEndpoint?: string;
  sqsEndpoint?: string;
  env?: Record<string, string>;
  queues?: Record<string, { url: string }>;
}

const runnerOf = async (dataDir: string): Promise<RunnerFile> =>
  JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as RunnerFile;

/**
 * Every status record's path (current status and the statuses of its history), by id. Throws when the store
 * cannot be read: a test or a report must not take "nothing read" for "nothing failed".
 *
 * @example
 * const paths = await recordPathsInStore(dataDir);
 * paths.get(id)?.statuses.includes('failed'); // whether the record was ever `failed`
 */
export const recordPathsInStore = async (dataDir: string): Promise<Map<string, RecordPath>> => {
  const runner = await runnerOf(dataDir);
  const table = runner.env?.RECORDS_TABLE;
  if (!runner.dynamoEndpoint || !table) throw new Error(`runner.json in ${dataDir} names no store`);
  const dynamo = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 3 });
  try {
    const paths = new Map<string, RecordPath>();
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: table,
          // Status records only: aliases and Idempotency-Key entries have no `status`.
          FilterExpression: 'attribute_exists(#status) AND attribute_exists(#owner)',
          ProjectionExpression: '#id, #status, #attempts, #tries, #history',
          ExpressionAttributeNames: {
            '#id': 'id',
            '#status': 'status',
            '#owner': 'owner',
            '#attempts': 'attempts',
            '#tries': 'tries',
            '#history': 'history',
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const id = item.id?.S ?? '?';
        paths.set(id, {
          id,
          status: item.status?.S ?? '?',
          attempts: Number(item.attempts?.N ?? 0),
          tries: Number(item.tries?.N ?? 0),
          statuses: (item.history?.L ?? []).map((entry) => entry.M?.status?.S ?? '?'),
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return paths;
  } finally {
    dynamo.destroy();
  }
};

/**
 * Messages in each dead-letter queue of the running `npm start` (visible and in flight), by logical id.
 *
 * @example
 * await deadLettersInStore(dataDir); // { SalesRegistrationDeadLetterQueue: 0, CaseDeadLetterQueue: 0 }
 */
export const deadLettersInStore = async (dataDir: string): Promise<Record<string, number>> => {
  const runner = await runnerOf(dataDir);
  if (!runner.sqsEndpoint || !runner.queues) throw new Error(`runner.json in ${dataDir} names no queues`);
  const sqs = new SQSClient({ ...localClientConfig(runner.sqsEndpoint), maxAttempts: 3 });
  try {
    const counts: Record<string, number> = {};
    for (const [name, queue] of Object.entries(runner.queues)) {
      if (!/DeadLetter/.test(name)) continue;
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queue.url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      counts[name] =
        Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
    }
    return counts;
  } finally {
    sqs.destroy();
  }
};
