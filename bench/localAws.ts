/**
 * The real local queue and store for the worker benchmark, as testkit starts them: fauxqs (SQS, in
 * memory) and dynalite (DynamoDB, LevelDB in a temporary directory), with the queues and table serverless.yml
 * declares. In its own process, so that the worker process is charged only for its own CPU:
 * `node bench/localAws.ts` prints `{"sqs", "dynamodb", "env"}` once both listen.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalQueue } from '../local/localQueue.ts';
import { startLocalStore } from '../local/localStore.ts';
import { createLocalResources } from '../local/resources.ts';
import { printServerlessConfig } from '../local/serverlessConfig.ts';
import { announce, awsFreeEnv, benchDir, type ServerProcess, startNodeServer } from './proc.ts';

export interface LocalAwsInfo {
  sqs: string;
  dynamodb: string;
  /** SALES_REGISTRATION_QUEUE_URL, CASE_QUEUE_URL, RECORDS_TABLE of the created resources. */
  env: Record<string, string>;
}

export const startLocalAws = (): Promise<ServerProcess<LocalAwsInfo>> =>
  startNodeServer<LocalAwsInfo>(`${benchDir}/localAws.ts`, awsFreeEnv());

if (import.meta.main) {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-bench-'));
  const [queue, store, config] = await Promise.all([
    startLocalQueue(),
    startLocalStore(dataDir),
    printServerlessConfig(process.env),
  ]);
  const resources = await createLocalResources(config, { sqs: queue.endpoint, dynamodb: store.endpoint });
  announce(
    { sqs: queue.endpoint, dynamodb: store.endpoint, env: resources.env } satisfies LocalAwsInfo,
    async () => {
      await Promise.all([queue.close(), store.close()]);
      await rm(dataDir, { recursive: true, force: true });
    },
  );
}
