/**
 * How long a backlog takes to drain after a downstream outage ends (docs/behaviour.md#outages-and-holds), against the concurrency cap's own
 * limit measured in the same run. Sales registrations to the SAP sandbox (the volume):
 *
 * - **Baseline**: `records` accepted (status records and messages, as intake leaves them) while SAP is up, then
 *   drained by functions/deliveryWorker.ts through Lambda's event source (bench/eventSource.ts) at the deployed
 *   batchSize, batching window and maximumConcurrency: the time from the first poll to the sandbox holding
 *   every record. The reconciler runs beside it as it does after an outage.
 * - **After an outage**: SAP switched down (`POST /_sandbox/outage`), the same number of records accepted, the
 *   worker and the reconciler running until the hold is open and every message has met it (none waiting
 *   visible in the queue), then SAP switched up: the time from then until the sandbox holds every record, and
 *   when the hold closed. Checked afterwards: every record `delivered`, none `failed`, the sandbox holding each
 *   exactly once; the delivery calls SAP received while down (the probes), beside the probes allowed.
 *
 *   node bench/outageDrain.ts [1000,10000]   # prints the JSON result
 */
import { inDeliveryStack } from './deliveryStack.ts';
import type { DeployedEventSource } from './deployedDelivery.ts';
import { benchDir } from './proc.ts';
import type { SandboxesInfo } from './sandboxes.ts';

/** The benchmark's short settings (stated in the results): a probe every few seconds, the reconciler often. */
export const OUTAGE_BENCH_SETTINGS = {
  OUTAGE_PROBE_SECONDS: '5',
  RECONCILE_INTERVAL_SECONDS: '10',
} as const;
/** SAP stays down at least this long, seconds (and until every message has met the hold). */
export const OUTAGE_MIN_SECONDS = 60;

export interface OutageDrainRun {
  records: number;
  /** No outage: first poll to every record in the sandbox. */
  baselineSeconds: number;
  /** The outage: SAP down until every message met the hold, seconds. */
  outageSeconds: number;
  /** SAP up to the hold closed (the first probe that succeeded), seconds. */
  holdClosedAfterSeconds: number | null;
  /** SAP up to every record in the sandbox. */
  drainSeconds: number;
  /** SAP up to half, 90 % and 99 % of the records in the sandbox. */
  drainShares: { half: number; most: number; nearlyAll: number };
  /** Delivery calls (and all business calls) SAP received while down. */
  deliveryCallsWhileDown: number;
  callsWhileDown: number;
  /** Probes the hold allowed in the outage: one per OUTAGE_PROBE_SECONDS. */
  probesAllowed: number;
  /** Records failed, delivered (of this run), and held by the sandbox. */
  failed: number;
  delivered: number;
  inSandbox: number;
  /** Records the reconciler queued again in the drain. */
  requeued: number;
  /** Receives and invocations of the event source in the outage (the worker declining). */
  invocationsWhileDown: number;
  receivedWhileDown: number;
  /** Messages received from SAP up to every record delivered: copies beyond one a record were dropped. */
  receivedInDrain?: number;
}

export interface OutageDrainResult {
  deployed: DeployedEventSource;
  settings: Record<string, string>;
  runs: OutageDrainRun[];
}

const child = async (): Promise<OutageDrainResult> => {
  const { SQSClient, GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const { localClientConfig } = await import('../local/aws.ts');
  const { handler: deliveryWorker } = await import('../functions/deliveryWorker.ts');
  const { countByStatus } = await import('../lib/store/statusIndex.ts');
  const { readHolds } = await import('../lib/outage/holdStore.ts');
  const { runReconciler } = await import('../lib/reconcile/reconcilerRun.ts');
  const { acceptedSalesSeeder } = await import('./acceptedSales.ts');
  const { startEventSource } = await import('./eventSource.ts');
  const { readCounts, readOutage, setOutage } = await import('./sandboxes.ts');

  const info = JSON.parse(process.env.BENCH_SANDBOXES as string) as SandboxesInfo;
  const deployed = JSON.parse(process.env.BENCH_DEPLOYED as string) as DeployedEventSource;
  const sizes = JSON.parse(process.env.BENCH_OUTAGE_SIZES as string) as number[];
  const probeSeconds = Number(process.env.OUTAGE_PROBE_SECONDS);
  const reconcileSeconds = Number(process.env.RECONCILE_INTERVAL_SECONDS);
  const queueUrl = process.env.SALES_REGISTRATION_QUEUE_URL as string;
  const sqs = new SQSClient({
    ...localClientConfig(process.env.AWS_ENDPOINT_URL_SQS as string),
    useQueueUrlAsEndpoint: false,
  });
  const seeder = acceptedSalesSeeder(queueUrl, 'OD');
  const seed = async (n: number) => {
    for (let done = 0; done < n; done += 500) await seeder(Math.min(500, n - done));
  };
  const inSandbox = async () => (await readCounts(info)).registrations;
  const visible = async () => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
  };
  const waitFor = async (check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 100) => {
    const until = performance.now() + timeoutMs;
    while (!(await check())) {
      if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
  const progress = (text: string) => process.stderr.write(`[outage] ${text}\n`);

  /** The worker through its event source and the reconciler every RECONCILE_INTERVAL_SECONDS, until stopped. */
  const startDelivery = () => {
    const source = startEventSource({
      sqs,
      queueUrl,
      handler: deliveryWorker,
      batchSize: deployed.batchSize,
      windowSeconds: deployed.windowSeconds,
      pollers: deployed.maximumConcurrency,
      waitSeconds: 1,
    });
    let requeued = 0;
    let stopped = false;
    const reconciler = (async () => {
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, reconcileSeconds * 1000));
        if (stopped) break;
        const { reconciled } = await runReconciler();
        if (!('error' in reconciled)) requeued += reconciled.requeued.salesRegistration;
      }
    })();
    return {
      tally: source.tally,
      requeued: () => requeued,
      stop: async () => {
        stopped = true;
        const tally = await source.stop();
        await reconciler;
        return tally;
      },
    };
  };

  const run = async (records: number): Promise<OutageDrainRun> => {
    // Baseline: the backlog drained with SAP up.
    progress(`${records}: baseline (no outage)`);
    await seed(records);
    let before = await inSandbox();
    let started = performance.now();
    let delivery = startDelivery();
    await waitFor(async () => (await inSandbox()) - before >= records, 3_600_000, 'the baseline drain');
    const baselineSeconds = (performance.now() - started) / 1000;
    await delivery.stop();

    // The outage: SAP down, records accepted, the worker meeting the hold.
    progress(`${records}: outage`);
    const failedBefore = await countByStatus('salesRegistration', 'failed');
    const deliveredBefore = await countByStatus('salesRegistration', 'delivered');
    await setOutage(info.sap.url, true);
    const outageStarted = performance.now();
    await seed(records);
    before = await inSandbox();
    delivery = startDelivery();
    await waitFor(
      async () => (await readHolds()).erp.held && (await visible()) === 0,
      3_600_000,
      'the hold to take every message',
      500,
    );
    const downFor = OUTAGE_MIN_SECONDS * 1000 - (performance.now() - outageStarted);
    if (downFor > 0) await new Promise((resolve) => setTimeout(resolve, downFor));
    const down = await readOutage(info.sap.url);
    const { invocations: invocationsWhileDown, received: receivedWhileDown } = delivery.tally;
    const outageSeconds = (performance.now() - outageStarted) / 1000;

    // SAP up: the drain.
    progress(`${records}: SAP up after ${outageSeconds.toFixed(0)} s; draining`);
    const requeuedBefore = delivery.requeued();
    await setOutage(info.sap.url, false);
    started = performance.now();
    let holdClosedAfterSeconds: number | null = null;
    const watchHold = (async () => {
      while (holdClosedAfterSeconds === null) {
        if (!(await readHolds()).erp.held) holdClosedAfterSeconds = (performance.now() - started) / 1000;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const reached: Partial<Record<keyof OutageDrainRun['drainShares'], number>> = {};
    const shares = { half: 0.5, most: 0.9, nearlyAll: 0.99 } as const;
    await waitFor(
      async () => {
        const done = (await inSandbox()) - before;
        for (const [name, share] of Object.entries(shares) as [keyof typeof shares, number][])
          if (reached[name] === undefined && done >= share * records)
            reached[name] = (performance.now() - started) / 1000;
        return done >= records;
      },
      3_600_000,
      'the drain after the outage',
      200,
    );
    const drainSeconds = (performance.now() - started) / 1000;
    const requeued = delivery.requeued() - requeuedBefore;
    const receivedInDrain = delivery.tally.received - receivedWhileDown;
    await delivery.stop();
    await watchHold;
    // Copies still hidden come back later and are dropped (their records settled): not waited for.
    return {
      records,
      baselineSeconds,
      outageSeconds,
      holdClosedAfterSeconds,
      drainSeconds,
      drainShares: {
        half: reached.half ?? drainSeconds,
        most: reached.most ?? drainSeconds,
        nearlyAll: reached.nearlyAll ?? drainSeconds,
      },
      deliveryCallsWhileDown: down.deliveryCallsWhileDown,
      callsWhileDown: down.callsWhileDown,
      probesAllowed: Math.floor(outageSeconds / probeSeconds) + 1,
      failed: (await countByStatus('salesRegistration', 'failed')) - failedBefore,
      delivered: (await countByStatus('salesRegistration', 'delivered')) - deliveredBefore,
      inSandbox: (await inSandbox()) - before,
      requeued,
      invocationsWhileDown,
      receivedWhileDown,
      receivedInDrain,
    };
  };

  const runs: OutageDrainRun[] = [];
  for (const records of sizes) runs.push(await run(records));
  sqs.destroy();
  return {
    deployed,
    settings: {
      ...OUTAGE_BENCH_SETTINGS,
      'SAP down at least': `${OUTAGE_MIN_SECONDS} s`,
      OUTAGE_AFTER_FAILURES: process.env.OUTAGE_AFTER_FAILURES ?? '5 (default)',
      RECONCILE_MAX_PER_RUN: process.env.RECONCILE_MAX_PER_RUN ?? '500 (default)',
      DELIVERY_RETRY_BASE_SECONDS: process.env.DELIVERY_RETRY_BASE_SECONDS ?? '30 (default)',
    },
    runs,
  };
};

/**
 * Starts fauxqs + dynalite and the sandboxes in their own processes, then the worker and reconciler in another.
 *
 * @example
 * const { runs } = await measureOutageDrain([1000, 10000]);
 */
export const measureOutageDrain = async (sizes: number[]): Promise<OutageDrainResult> => {
  const { deployedEventSource } = await import('./deployedDelivery.ts');
  const deployed = await deployedEventSource('erpDelivery');
  return inDeliveryStack<OutageDrainResult>('outage', [`${benchDir}/outageDrain.ts`, '--child'], {
    ...OUTAGE_BENCH_SETTINGS,
    BENCH_DEPLOYED: JSON.stringify(deployed),
    BENCH_OUTAGE_SIZES: JSON.stringify(sizes),
  });
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else
    console.log(
      JSON.stringify(
        await measureOutageDrain((process.argv[2] ?? '1000,10000').split(',').map(Number)),
        null,
        1,
      ),
    );
}
