/**
 * What the service says about the records after the campaign: the status look-ups over HTTP (the contract's
 * GET endpoints) and, as a net for records no answer named, the status records still `accepted` in the local
 * store (read through the endpoint the running `npm start` wrote to `<DATA_DIR>/runner.json`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { localClientConfig } from '../local/aws.ts';
import type { StatusLookup } from './ledger.ts';
import type { Service } from './service.ts';
import { clientOf, type Operation } from './workload.ts';

/**
 * One GET look-up, with the key of the client that sent the record (only its owner sees it; by default the usual
 * client of its operation); retries no answer and 5xx a few times (the service is not under faults any more).
 */
export const lookUpStatus = async (
  service: Service,
  op: Operation,
  id: string,
  client: string = clientOf({ op }),
): Promise<StatusLookup> => {
  const path = op === 'sale' ? `/erp/sales_registration/${id}` : `/crm/case/${encodeURIComponent(id)}`;
  const key = service.keys()[client];
  let last: StatusLookup = { http: 0 };
  for (let attempt = 1; attempt <= 5; attempt++) {
    await service.whenUp();
    try {
      const response = await fetch(`${service.url}${path}`, {
        headers: { 'x-api-key': key },
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      last = { http: response.status };
      if (response.status === 200) {
        const body = JSON.parse(text) as StatusLookup;
        return {
          http: 200,
          status: body.status,
          error: body.error,
          attempts: body.attempts,
          ...(body.downstreamId === undefined ? {} : { downstreamId: body.downstreamId }),
          ...(body.test === undefined ? {} : { test: body.test }),
        };
      }
      if (response.status < 500) return last;
    } catch {
      last = { http: 0 };
    }
    await sleep(500 * attempt);
  }
  return last;
};

/** Runs `work` over `items`, `concurrency` at a time. */
export const forEachLimited = async <T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
};

interface RunnerFile {
  dynamoEndpoint?: string;
  env?: Record<string, string>;
}

/**
 * Ids of the status records still `accepted` in the store of the `npm start` running on `dataDir`. Reads only
 * what any status record has (`id`, `status`); undefined when the store cannot be read.
 */
export const acceptedInStore = async (dataDir: string): Promise<string[] | undefined> => {
  let runner: RunnerFile;
  try {
    runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as RunnerFile;
  } catch {
    return undefined;
  }
  const table = runner.env?.RECORDS_TABLE;
  if (!runner.dynamoEndpoint || !table) return undefined;
  const dynamo = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 3 });
  try {
    const ids: string[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: '#status = :accepted',
          ProjectionExpression: '#id, #status',
          ExpressionAttributeNames: { '#id': 'id', '#status': 'status' },
          ExpressionAttributeValues: { ':accepted': { S: 'accepted' } },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) ids.push(item.id?.S ?? '?');
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return ids;
  } catch {
    return undefined;
  } finally {
    dynamo.destroy();
  }
};
