import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalQueue } from '../../scripts/local/localQueue.ts';
import { startLocalStore } from '../../scripts/local/localStore.ts';
import {
  printServerlessConfig,
  type ResolvedServerlessConfig,
} from '../../scripts/local/serverlessConfig.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    sqsEndpoint: string;
    dynamoEndpoint: string;
    serverlessConfig: ResolvedServerlessConfig;
  }
}

/**
 * Starts the real local stand-ins once for the whole run: fauxqs (SQS) and dynalite (DynamoDB) on 127.0.0.1,
 * and reads the resources serverless.yml deploys, so that every test file can create its own copies of them.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-test-'));
  const [queue, store, serverlessConfig] = await Promise.all([
    startLocalQueue(),
    startLocalStore(dataDir),
    printServerlessConfig({ ...process.env, DELIVERY_MAX_ATTEMPTS: '3' }),
  ]);
  project.provide('sqsEndpoint', queue.endpoint);
  project.provide('dynamoEndpoint', store.endpoint);
  project.provide('serverlessConfig', serverlessConfig);
  return async () => {
    await Promise.all([queue.close(), store.close()]);
    await rm(dataDir, { recursive: true, force: true });
  };
}
