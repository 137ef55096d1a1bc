import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalQueue } from '../local/localQueue.ts';
import { startLocalStore } from '../local/localStore.ts';
import { printServerlessConfig, type ResolvedServerlessConfig } from '../local/serverlessConfig.ts';
import { personalValues } from './factories/records.ts';
import { markerValues } from './leakMarkers.ts';
import { describeLeaks, findLeaksInDirectory } from './logScan.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    sqsEndpoint: string;
    dynamoEndpoint: string;
    serverlessConfig: ResolvedServerlessConfig;
    /** Where testkit/logCapture.ts puts each worker's output. */
    logCaptureDir: string;
  }
}

/**
 * Starts the real local stand-ins once for the whole run: fauxqs (SQS) and dynalite (DynamoDB) on 127.0.0.1,
 * and reads the resources serverless.yml deploys, so that every test file can create its own copies of them.
 *
 * Also makes the directory where every test worker's output is captured (testkit/logCapture.ts), and at
 * the end of the run scans it for personal data: the factories' values (testkit/factories/records.ts) and the
 * markers of generated records (testkit/leakMarkers.ts). A find fails the run, naming value, file and line.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-test-'));
  const logCaptureDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-logs-'));
  project.provide('logCaptureDir', logCaptureDir);
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
    // No personal data in any output: the factories' values and the markers of generated records.
    const leaks = findLeaksInDirectory(logCaptureDir, [...personalValues, ...markerValues]);
    if (leaks.length > 0) throw new Error(describeLeaks(logCaptureDir, leaks));
    await rm(logCaptureDir, { recursive: true, force: true });
  };
}
