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
  // A value may name a setting of custom.delivery (`${self:custom.delivery.batchSize}`), with an env default or not.
  const custom = /^custom:\n {2}delivery:\n((?: {4}.*\n|\n)*)/m.exec(yml)?.[1] ?? '';
  const resolve = (value: string | undefined): string | undefined => {
    const named = /^\$\{self:custom\.delivery\.(\w+)\}$/.exec(value ?? '')?.[1];
    const raw = named ? new RegExp(`^ {4}${named}: (.+)$`, 'm').exec(custom)?.[1] : value;
    return /\$\{env:\w+, (\d+)\}/.exec(raw ?? '')?.[1] ?? raw;
  };
  const read = (name: string, fallback: number) =>
    Number(resolve(new RegExp(`^\\s+${name}: (.+)$`, 'm').exec(block)?.[1].trim()) ?? fallback);
  const batchSize = read('batchSize', 10);
  const windowSeconds = read('maximumBatchingWindow', 0);
  const concurrency = read('maximumConcurrency', 2);
  return { batchSize, windowSeconds, maximumConcurrency: concurrency };
};
