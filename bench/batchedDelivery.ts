/**
 * Batched delivery (docs/behaviour.md#batching), each figure beside today's one-call-per-record path measured in the same run:
 *
 * - **Downstream calls per record** for backlogs of 1, 10, 100 and 1,000 records, SAP and Salesforce: the backlog
 *   is queued (status records `accepted` and a message each, as intake leaves them), then drained by
 *   functions/deliveryWorker.ts through Lambda's event source (bench/eventSource.ts: batches gathered up to
 *   batchSize within the batching window, maximumConcurrency invocations at once) at the deployed settings
 *   (serverless.yml), and at batchSize 200 when the deployed one is smaller. The sandboxes count the calls
 *   (`GET /_sandbox/calls`). Baseline: the same number of records through the single adapters
 *   (the delivery seam's call of one record, `downstreamCaller(...).call([record])`, one call per record, 10 at once as a batch of 10 ran them before).
 * - **Worker time per record**: wall time and CPU of the worker's process per record while it drains the
 *   1,000-record backlog, batched; beside it the downstream step alone, the batched adapter calls
 *   (`deliverSalesRegistrations`, `upsertCases`, in the batches the worker forms) against one call per record
 *   per record.
 * - **Single-record latency**: a lone record, from its send to the sandbox holding it, through the same event
 *   source polling an idle queue, with the batching window 0 and with the configured window.
 *
 * The worker, its event source and the adapters run in one child process; fauxqs + dynalite (bench/localAws.ts)
 * and both sandboxes (bench/sandboxes.ts) in processes of their own.
 *
 *   node bench/batchedDelivery.ts        # prints the JSON result
 */
import { randomUUID } from 'node:crypto';
import { inDeliveryStack } from './deliveryStack.ts';
import type { DeployedEventSource } from './deployedDelivery.ts';
import { benchDir, median } from './proc.ts';
import type { SandboxesInfo } from './sandboxes.ts';

export type Downstream = 'sap' | 'salesforce';

export interface DrainRun {
  downstream: Downstream;
  records: number;
  batchSize: number;
  windowSeconds: number;
  pollers: number;
  /** Delivery calls the sandbox received, and the records they carried. */
  calls: number;
  carried: number;
  invocations: number;
  /** From the first poll to the sandbox holding every record. */
  seconds: number;
  /** CPU of the worker's process per record, µs (full core). */
  cpuUsPerRecord: number;
}

export interface SingleRun {
  downstream: Downstream;
  records: number;
  calls: number;
  seconds: number;
  cpuUsPerRecord: number;
}

export interface LatencyRun {
  downstream: Downstream;
  windowSeconds: number;
  /** Send to delivered, ms, each sample. */
  samplesMs: number[];
  medianMs: number;
}

export interface BatchedResult {
  deployed: Record<Downstream, DeployedEventSource>;
  backlogs: number[];
  drains: DrainRun[];
  singles: SingleRun[];
  /** The downstream step alone at the 1,000 backlog: batched adapter calls against one call per record. */
  adapterSteps: { downstream: Downstream; batched: SingleRun; single: SingleRun }[];
  /** The same worker fed one record per invocation, 20 invocations at once: one call per record. */
  singleWorker: DrainRun[];
  latency: LatencyRun[];
  /** Which worker was measured (the code's own description). */
  workerBatched: boolean;
}

const BACKLOGS = [1, 10, 100, 1000];

/** The event source's batch size batched delivery was designed for: up to 200 messages an invocation. */
const DESIGN_BATCH_SIZE = 200;
/** Today's worker ran a batch's 10 records at once, each its own call. */
const SINGLE_IN_FLIGHT = 10;

const child = async (): Promise<BatchedResult> => {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  const { localClientConfig } = await import('../local/aws.ts');
  const { handler: deliveryWorker } = await import('../functions/deliveryWorker.ts');
  const { downstreamCaller } = await import('../lib/delivery/downstreams.ts');
  const { createErpClient, erpConfigFromEnv } = await import('../lib/downstream/erp/index.ts');
  const { createCrmClient, crmConfigFromEnv } = await import('../lib/downstream/crm/index.ts');
  const { countByStatus } = await import('../lib/store/statusIndex.ts');
  const { validateSalesRegistrations } = await import('../lib/validation/salesRegistration.ts');
  const { salesRegistrationInput } = await import('../testkit/factories/records.ts');
  const { acceptedSalesSeeder } = await import('./acceptedSales.ts');
  const { acceptedCaseSeeder, acceptedCaseStatuses } = await import('./acceptedCases.ts');
  const { startEventSource } = await import('./eventSource.ts');
  const { readCounts, readDeliveryCalls } = await import('./sandboxes.ts');

  const info = JSON.parse(process.env.BENCH_SANDBOXES as string) as SandboxesInfo;
  const deployed = JSON.parse(process.env.BENCH_DEPLOYED as string) as BatchedResult['deployed'];
  const sqs = new SQSClient({
    ...localClientConfig(process.env.AWS_ENDPOINT_URL_SQS as string),
    useQueueUrlAsEndpoint: false,
  });
  const queues: Record<Downstream, string> = {
    sap: process.env.SALES_REGISTRATION_QUEUE_URL as string,
    salesforce: process.env.CASE_QUEUE_URL as string,
  };
  const seeders = {
    sap: acceptedSalesSeeder(queues.sap, 'BD'),
    salesforce: acceptedCaseSeeder(queues.salesforce),
  };
  /** Seeds in requests of at most 500 records, as intake takes them. */
  const seed = async (downstream: Downstream, n: number) => {
    for (let done = 0; done < n; done += 500) await seeders[downstream](Math.min(500, n - done));
  };
  const kindOf = { sap: 'salesRegistration', salesforce: 'caseRecord' } as const;
  const held = async (downstream: Downstream) => {
    const counts = await readCounts(info);
    return downstream === 'sap' ? counts.registrations : counts.cases;
  };
  const callsOf = async (downstream: Downstream) => (await readDeliveryCalls(info))[downstream];
  const waitFor = async (check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 20) => {
    const until = performance.now() + timeoutMs;
    while (!(await check())) {
      if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };

  /** Queues `records`, then drains them through the worker; the sandbox's count says when all are there. */
  const drain = async (
    downstream: Downstream,
    records: number,
    batchSize: number,
    windowSeconds: number,
    pollers = deployed[downstream].maximumConcurrency,
  ): Promise<DrainRun> => {
    const kind = kindOf[downstream];
    const deliveredBefore = await countByStatus(kind, 'delivered');
    await seed(downstream, records);
    const [before, heldBefore] = await Promise.all([callsOf(downstream), held(downstream)]);
    (globalThis as { gc?: () => void }).gc?.();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const source = startEventSource({
      sqs,
      queueUrl: queues[downstream],
      handler: deliveryWorker,
      batchSize,
      windowSeconds,
      pollers,
      waitSeconds: 1,
    });
    await waitFor(
      async () => (await held(downstream)) - heldBefore >= records,
      600_000,
      `${records} records`,
    );
    const seconds = (performance.now() - started) / 1000;
    const tally = await source.stop();
    const used = process.cpuUsage(cpu);
    const after = await callsOf(downstream);
    // Every record is recorded delivered (checked outside the timing).
    const delivered = (await countByStatus(kind, 'delivered')) - deliveredBefore;
    if (delivered !== records)
      throw new Error(`${downstream}: ${delivered} of ${records} recorded delivered`);
    return {
      downstream,
      records,
      batchSize,
      windowSeconds,
      pollers,
      calls: after.calls - before.calls,
      carried: after.records - before.records,
      invocations: tally.invocations,
      seconds,
      cpuUsPerRecord: (used.user + used.system) / records,
    };
  };

  // Stored records for the paths that need no queue: fresh ids, fresh frame numbers.
  let frame = 0;
  const tag = Date.now().toString(36).toUpperCase();
  const storedOf = (downstream: Downstream, n: number) => {
    if (downstream === 'salesforce')
      return acceptedCaseStatuses(n, `single-${tag}-${frame++}`).map(({ id, kind, record }) => ({
        id,
        kind,
        record,
      }));
    // One at a time: a request carries at most 500.
    return Array.from({ length: n }, () => {
      const validated = validateSalesRegistrations([
        salesRegistrationInput({
          FrameNum: `BS${tag}${(frame++).toString(36).toUpperCase().padStart(6, '0')}`,
        }),
      ]);
      if (!validated.ok) throw new Error('seed records invalid');
      return {
        id: randomUUID().replaceAll('-', ''),
        kind: 'salesRegistration' as const,
        record: validated.value[0],
      };
    });
  };

  const timed = async (
    downstream: Downstream,
    records: number,
    run: () => Promise<void>,
  ): Promise<SingleRun> => {
    const before = await callsOf(downstream);
    (globalThis as { gc?: () => void }).gc?.();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const after = await callsOf(downstream);
    return {
      downstream,
      records,
      calls: after.calls - before.calls,
      seconds,
      cpuUsPerRecord: (used.user + used.system) / records,
    };
  };

  /** The old path: one call per record (the seam's call of one record: the single POST or upsert), SINGLE_IN_FLIGHT at once. */
  const single = async (downstream: Downstream, records: number) => {
    const stored = storedOf(downstream, records);
    const caller = await downstreamCaller(downstream === 'sap' ? 'erp' : 'crm');
    return timed(downstream, records, async () => {
      let next = 0;
      const lane = async () => {
        while (next < stored.length) {
          const { outcomes } = await caller.call([stored[next++]]);
          for (const outcome of outcomes.values())
            if (outcome.kind !== 'delivered') throw new Error(`single: ${outcome.kind}`);
        }
      };
      await Promise.all(Array.from({ length: SINGLE_IN_FLIGHT }, lane));
    });
  };

  const erp = createErpClient(erpConfigFromEnv());
  const crm = createCrmClient(crmConfigFromEnv());
  /** The adapters' batched calls, in batches of `batchSize` (the worker's batches) sliced into calls as the worker slices them, `pollers` at once. */
  const batchedAdapters = async (
    downstream: Downstream,
    records: number,
    batchSize: number,
    pollers: number,
  ) => {
    const stored = storedOf(downstream, records);
    const batches: (typeof stored)[] = [];
    for (let start = 0; start < stored.length; start += batchSize)
      batches.push(stored.slice(start, start + batchSize));
    return timed(downstream, records, async () => {
      let next = 0;
      const lane = async () => {
        while (next < batches.length) {
          const items = batches[next++].map(({ id, record }) => ({ id, record }));
          const callSize = downstream === 'sap' ? erp.callSize : crm.callSize;
          for (let start = 0; start < items.length; start += callSize) {
            const call = items.slice(start, start + callSize);
            const { outcomes } =
              downstream === 'sap'
                ? await erp.deliverSalesRegistrations(call as never)
                : await crm.upsertCases(call as never);
            for (const outcome of outcomes.values())
              if (outcome.kind !== 'delivered') throw new Error(`batched: ${outcome.kind}`);
          }
        }
      };
      await Promise.all(Array.from({ length: pollers }, lane));
    });
  };

  /** A lone record on an idle queue, through the event source: send to the sandbox holding it. */
  const latency = async (
    downstream: Downstream,
    windowSeconds: number,
    samples: number,
  ): Promise<LatencyRun> => {
    const source = startEventSource({
      sqs,
      queueUrl: queues[downstream],
      handler: deliveryWorker,
      batchSize: Math.max(deployed[downstream].batchSize, DESIGN_BATCH_SIZE),
      windowSeconds,
      pollers: deployed[downstream].maximumConcurrency,
      waitSeconds: 1,
    });
    const samplesMs: number[] = [];
    try {
      for (let i = 0; i < samples + 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 400));
        const heldBefore = await held(downstream);
        const started = performance.now();
        await seeders[downstream](1);
        await waitFor(async () => (await held(downstream)) > heldBefore, 30_000, 'a lone record', 2);
        // The first sample warms the path (connections, tokens) and is not kept.
        if (i > 0) samplesMs.push(performance.now() - started);
      }
    } finally {
      await source.stop();
    }
    return { downstream, windowSeconds, samplesMs, medianMs: median(samplesMs) };
  };

  const progress = (text: string) => process.stderr.write(`[batched] ${text}\n`);
  const downstreams: Downstream[] = ['sap', 'salesforce'];
  const drains: DrainRun[] = [];
  const singles: SingleRun[] = [];
  const adapterSteps: BatchedResult['adapterSteps'] = [];
  const singleWorker: DrainRun[] = [];
  const latencyRuns: LatencyRun[] = [];
  for (const downstream of downstreams) {
    const { batchSize, windowSeconds, maximumConcurrency } = deployed[downstream];
    // Warm-up: connections, tokens, JIT.
    await drain(downstream, 20, batchSize, 0);
    await single(downstream, 20);
    const settings = [batchSize, ...(batchSize < DESIGN_BATCH_SIZE ? [DESIGN_BATCH_SIZE] : [])];
    for (const records of BACKLOGS) {
      progress(`${downstream}: backlog ${records}`);
      singles.push(await single(downstream, records));
      for (const size of settings) drains.push(await drain(downstream, records, size, windowSeconds));
    }
    progress(`${downstream}: the downstream step alone`);
    const largest = settings[settings.length - 1];
    // The worker fed one record per invocation (so one call per record), as many invocations at once as a batch
    // of 10 at maximumConcurrency made calls at once before: the worker-level baseline.
    singleWorker.push(await drain(downstream, 1000, 1, 0, maximumConcurrency * SINGLE_IN_FLIGHT));
    adapterSteps.push({
      downstream,
      batched: await batchedAdapters(downstream, 1000, largest, maximumConcurrency),
      single: await single(downstream, 1000),
    });
    progress(`${downstream}: lone-record latency`);
    const samples = Number(process.env.BENCH_LATENCY_SAMPLES ?? 7);
    for (const window of [0, Math.max(1, windowSeconds)])
      latencyRuns.push(await latency(downstream, window, samples));
  }
  sqs.destroy();
  // The worker is batched when a backlog of 100 reached its sandbox in fewer calls than records.
  const workerBatched = drains.some((d) => d.records >= 100 && d.calls < d.records);
  return {
    deployed,
    backlogs: BACKLOGS,
    drains,
    singles,
    adapterSteps,
    singleWorker,
    latency: latencyRuns,
    workerBatched,
  };
};

/** Starts fauxqs + dynalite and the sandboxes in their own processes, then the worker in another. */
export const measureBatchedDelivery = async (): Promise<BatchedResult> => {
  const { deployedEventSource } = await import('./deployedDelivery.ts');
  const deployed = {
    sap: await deployedEventSource('erpDelivery'),
    salesforce: await deployedEventSource('crmDelivery'),
  };
  return inDeliveryStack<BatchedResult>(
    'batched',
    ['--expose-gc', `${benchDir}/batchedDelivery.ts`, '--child'],
    {
      BENCH_DEPLOYED: JSON.stringify(deployed),
    },
  );
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else console.log(JSON.stringify(await measureBatchedDelivery(), null, 1));
}
