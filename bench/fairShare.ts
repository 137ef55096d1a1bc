/**
 * Fair share between clients (docs/behaviour.md#batching): a quiet client's delivery time while another client's
 * backlog drains, each figure beside its baseline measured in the same run. Sales registrations to the SAP sandbox through
 * functions/deliveryWorker.ts and the local runner's own poller (local/queuePoller.ts `startPoller`, as
 * `npm start` runs it: the deployed batchSize, batching window and maximumConcurrency):
 *
 * - **No flood**: the quiet client (`quiet-dealer`) accepts one record a second; each one's time from being
 *   accepted and queued (the moment intake answers 200) to delivered (the worker's write of `delivered`, the
 *   status record's `updatedAt`).
 * - **Flood, fair** (what ships): the flooding client (`flooding-dealer`) has `records` accepted and queued first;
 *   then the poller starts and the quiet client accepts one record a second until the flood has drained. The
 *   quiet records' times, and the flood's drain rate (records / seconds from the poller's start to its last
 *   record delivered). Every message carries its client as its MessageGroupId: the queue is a fair queue
 *   (local/emulators/fauxqs/fairQueue.ts, as SQS fair queues on AWS).
 * - **Flood, first in, first out** (before fair queueing): the same, the messages carrying no group id, so the
 *   queue serves them in the order they came.
 *
 *   node bench/fairShare.ts [10000]   # prints the JSON result
 */
import { setTimeout as pause } from 'node:timers/promises';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { quantile } from '../testkit/quantile.ts';
import { inDeliveryStack } from './deliveryStack.ts';
import type { DeployedEventSource } from './deployedDelivery.ts';
import { benchDir } from './proc.ts';

/** A quiet record is accepted this often while a flood drains. */
const QUIET_EVERY_MS = 1000;
/** Quiet records measured with no flood. */
const NO_FLOOD_SAMPLES = 30;

export interface QuietTimes {
  /** Accepted-and-queued to delivered, ms, each sample. */
  samplesMs: number[];
  p50Ms: number;
  p99Ms: number;
}

export interface FloodRun {
  records: number;
  fair: boolean;
  quiet: QuietTimes;
  /** Poller start to the flood's last record delivered. */
  drainSeconds: number;
  recordsPerSecond: number;
}

export interface FairShareResult {
  deployed: DeployedEventSource;
  noFlood: QuietTimes;
  runs: FloodRun[];
}

const timesOf = (samplesMs: number[]): QuietTimes => ({
  samplesMs,
  p50Ms: quantile(samplesMs, 0.5),
  p99Ms: quantile(samplesMs, 0.99),
});

const child = async (): Promise<FairShareResult> => {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  const { localClientConfig } = await import('../local/aws.ts');
  const { handler: deliveryWorker } = await import('../functions/deliveryWorker.ts');
  const { startPoller } = await import('../local/queuePoller.ts');
  const { acceptedSalesSeeder } = await import('./acceptedSales.ts');
  const { getStatusRecord } = await import('../lib/store/statusRecords.ts');

  const deployed = JSON.parse(process.env.BENCH_DEPLOYED as string) as DeployedEventSource;
  const sizes = JSON.parse(process.env.BENCH_FAIR_SIZES as string) as number[];
  const queueUrl = process.env.SALES_REGISTRATION_QUEUE_URL as string;
  const sqs = new SQSClient({
    ...localClientConfig(process.env.AWS_ENDPOINT_URL_SQS as string),
    useQueueUrlAsEndpoint: false,
  });
  const progress = (text: string) => process.stderr.write(`[fair] ${text}\n`);
  const seeders = (fair: boolean) => ({
    flooder: acceptedSalesSeeder(queueUrl, 'FL', 'flooding-dealer', fair),
    quietSeeder: acceptedSalesSeeder(queueUrl, 'QT', 'quiet-dealer', fair),
  });

  /** When each record the worker finished delivering was done, by id. */
  const doneAt = new Map<string, number>();
  const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const answer = await deliveryWorker(event, context);
    const failed = new Set((answer?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    const now = performance.now();
    for (const record of event.Records)
      if (!failed.has(record.messageId)) doneAt.set(JSON.parse(record.body).id, now);
    return answer;
  };
  const startDelivery = () =>
    startPoller({
      sqs,
      queueUrl,
      handler,
      batchSize: deployed.batchSize,
      batchingWindowSeconds: deployed.windowSeconds,
      maximumConcurrency: deployed.maximumConcurrency,
      onError: (error) => progress(`poller: ${error instanceof Error ? error.message : String(error)}`),
    });
  const waitUntil = async (check: () => boolean) => {
    while (!check()) await pause(50);
  };

  /** Accepts one quiet record every QUIET_EVERY_MS until `enough()`, then waits for each to be delivered. */
  const quietRecords = async (
    quietSeeder: ReturnType<typeof seeders>['quietSeeder'],
    enough: () => boolean,
  ) => {
    const sent: { id: string; at: number }[] = [];
    while (!enough()) {
      const [id] = await quietSeeder(1);
      sent.push({ id, at: Date.now() });
      await pause(QUIET_EVERY_MS);
    }
    await waitUntil(() => sent.every(({ id }) => doneAt.has(id)));
    const times: number[] = [];
    for (const { id, at } of sent) {
      const status = await getStatusRecord(id);
      if (status?.status !== 'delivered') throw new Error(`quiet record ${id} is ${status?.status}`);
      times.push(Date.parse(status.updatedAt) - at);
    }
    return timesOf(times);
  };

  progress(`no flood: ${NO_FLOOD_SAMPLES} quiet records, one a second`);
  let delivery = startDelivery();
  let sentQuiet = 0;
  const noFlood = await quietRecords(seeders(true).quietSeeder, () => sentQuiet++ >= NO_FLOOD_SAMPLES);
  await delivery.stop();

  const runs: FloodRun[] = [];
  for (const records of sizes)
    for (const fair of [true, false]) {
      progress(`flood of ${records} (${fair ? 'fair' : 'first in, first out'}): queueing`);
      const { flooder, quietSeeder } = seeders(fair);
      const flood: string[] = [];
      for (let done = 0; done < records; done += 500)
        flood.push(...(await flooder(Math.min(500, records - done))));
      progress(`flood of ${records} (${fair ? 'fair' : 'first in, first out'}): draining`);
      const started = performance.now();
      delivery = startDelivery();
      const floodDone = () => flood.every((id) => doneAt.has(id));
      const quiet = await quietRecords(quietSeeder, floodDone);
      await waitUntil(floodDone);
      const drainSeconds = (Math.max(...flood.map((id) => doneAt.get(id) as number)) - started) / 1000;
      await delivery.stop();
      runs.push({ records, fair, quiet, drainSeconds, recordsPerSecond: records / drainSeconds });
      progress(
        `flood of ${records} (${fair ? 'fair' : 'FIFO'}): ${drainSeconds.toFixed(1)} s; quiet p50 ${quiet.p50Ms.toFixed(0)} ms, p99 ${quiet.p99Ms.toFixed(0)} ms`,
      );
    }
  sqs.destroy();
  return { deployed, noFlood, runs };
};

/**
 * Starts fauxqs + dynalite and the sandboxes in their own processes, then the worker and the poller in another.
 *
 * @example
 * const { noFlood, runs } = await measureFairShare([10000]);
 */
export const measureFairShare = async (sizes: number[]): Promise<FairShareResult> => {
  const { deployedEventSource } = await import('./deployedDelivery.ts');
  const deployed = await deployedEventSource('erpDelivery');
  return inDeliveryStack<FairShareResult>('fair', [`${benchDir}/fairShare.ts`, '--child'], {
    BENCH_DEPLOYED: JSON.stringify(deployed),
    BENCH_FAIR_SIZES: JSON.stringify(sizes),
  });
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else
    console.log(
      JSON.stringify(await measureFairShare((process.argv[2] ?? '10000').split(',').map(Number)), null, 1),
    );
}
