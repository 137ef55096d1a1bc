/**
 * The delivery workers' event source settings as serverless.yml deploys them (batchSize, maximumBatchingWindow,
 * maximumConcurrency's default), read from the template's text so the benchmarks measure what is deployed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from './proc.ts';

export interface DeployedEventSource {
  batchSize: number;
  windowSeconds: number;
  maximumConcurrency: number;
}

/**
 * Reads one delivery function's SQS event settings.
 *
 * @example
 * await deployedEventSource('crmDelivery') // { batchSize: 10, windowSeconds: 1, maximumConcurrency: 2 }
 */
export const deployedEventSource = async (
  fn: 'erpDelivery' | 'crmDelivery',
): Promise<DeployedEventSource> => {
  const yml = await readFile(join(projectRoot, 'serverless.yml'), 'utf8');
  const block = new RegExp(`^ {2}${fn}:\\n((?: {4}.*\\n|\\n)*)`, 'm').exec(yml)?.[1] ?? '';
  const batchSize = Number(/^\s+batchSize: (\d+)/m.exec(block)?.[1] ?? 10);
  const windowSeconds = Number(/^\s+maximumBatchingWindow: (\d+)/m.exec(block)?.[1] ?? 0);
  // maximumConcurrency: ${self:custom.delivery.erpMaxConcurrency}, whose default is in custom.delivery.
  const setting = fn === 'erpDelivery' ? 'erpMaxConcurrency' : 'crmMaxConcurrency';
  const concurrency = new RegExp(`^\\s+${setting}: .*?, (\\d+)\\}`, 'm').exec(yml)?.[1];
  return { batchSize, windowSeconds, maximumConcurrency: Number(concurrency ?? 2) };
};
