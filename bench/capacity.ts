import { localClientConfig } from '../local/aws.ts';
import { ALLOWANCE } from './costModel.ts';
import { startLocalAws } from './localAws.ts';
import { awsFreeEnv, benchDir, quietPowertools, runNodeJson } from './proc.ts';
import { markdownTable } from './table.ts';

/** The deployed settings (serverless.yml). */
export const DEPLOYED = { maximumConcurrency: 2, batchSize: 10 } as const;
/** AWS round trips around a batch (stated, not measured): the event source's receive and delete. */
export const SQS_AROUND_BATCH_MS = 2 * ALLOWANCE.sqsMs;

export interface SimulationRun {
  latencyMs: number;
  records: number;
  pollers: number;
  seconds: number;
  perSecond: number;
  /** Mean messages per received batch. */
  meanBatch: number;
  /** Worker process CPU per delivery, µs (full core). */
  cpuUsPerDelivery: number;
}

export interface CapacityResult {
  calibration: SimulationRun;
  runs: SimulationRun[];
}

/** Records a second at a batch cycle of `cycleMs`. */
export const recordsPerSecond = (
  cycleMs: number,
  concurrency: number = DEPLOYED.maximumConcurrency,
  batch: number = DEPLOYED.batchSize,
) => (concurrency * batch) / (cycleMs / 1000);

/**
 * The batch cycle on AWS (paper): receive, claim, downstream, outcome, publish, outbox, delete, and the CPU of the batch's
 * deliveries (measured on a full core) at the worker's share of a vCPU (memory / 1,769 MB).
 */
export const awsCycleMs = (
  latencyMs: number,
  cpuUsPerDelivery: number,
  memoryMb: number,
  batch: number = DEPLOYED.batchSize,
) =>
  SQS_AROUND_BATCH_MS +
  2 * ALLOWANCE.dynamoMs +
  latencyMs +
  // The settled outcome's event: PutEvents, then the outbox emptied.
  ALLOWANCE.eventBridgeMs +
  ALLOWANCE.dynamoMs +
  ((batch * cpuUsPerDelivery) / 1000) * Math.max(1, ALLOWANCE.fullCpuMb / memoryMb);

const child = async (): Promise<CapacityResult> => {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  const { handler: deliveryWorker } = await import('../functions/deliveryWorker.ts');
  const { pollOnce } = await import('../local/queuePoller.ts');
  const { getStatusRecord } = await import('../lib/store/statusRecords.ts');
  const { startSapSandbox } = await import('../sandbox/sapSandbox.ts');

  const sap = await startSapSandbox();
  // The worker publishes each outcome's event (then empties the outbox), as on AWS: to the local event bus.
  const { startLocalEventBus } = await import('../local/eventBus.ts');
  const bus = await startLocalEventBus({
    busNames: ['dealer-gateway-bench'],
  });
  process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.url;
  process.env.EVENT_BUS_NAME = 'dealer-gateway-bench';
  process.env.ERP_BASE_URL = sap.url;
  process.env.ERP_SERVICE_PATH = sap.servicePath;
  process.env.ERP_USERNAME = sap.username;
  process.env.ERP_PASSWORD = sap.password;
  const queueUrl = process.env.SALES_REGISTRATION_QUEUE_URL as string;
  const sqs = new SQSClient({
    ...localClientConfig(process.env.AWS_ENDPOINT_URL_SQS as string),
    useQueueUrlAsEndpoint: false,
  });

  const { acceptedSalesSeeder } = await import('./acceptedSales.ts');
  /** Pre-accepted records: status `accepted` and a message each, as intake leaves them. */
  const seed = acceptedSalesSeeder(queueUrl, 'WC');

  const simulate = async (latencyMs: number, records: number, pollers: number): Promise<SimulationRun> => {
    const ids = await seed(records);
    if (latencyMs > 0) sap.inject(...Array.from({ length: records }, () => ({ delayMs: latencyMs })));
    let delivered = 0;
    let batches = 0;
    let received = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const poller = async () => {
      let idle = 0;
      while (delivered < records) {
        const result = await pollOnce({
          sqs,
          queueUrl,
          handler: deliveryWorker,
          batchSize: DEPLOYED.batchSize,
        });
        if (result.failed > 0) throw new Error(`worker reported ${result.failed} failures`);
        if (result.received === 0) {
          if (++idle > 200) throw new Error(`queue empty after ${delivered}/${records}`);
          continue;
        }
        batches++;
        received += result.received;
        delivered += result.deleted;
      }
    };
    await Promise.all(Array.from({ length: pollers }, poller));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    for (const id of [ids[0], ids[ids.length - 1]]) {
      const status = await getStatusRecord(id);
      if (status?.status !== 'delivered') throw new Error(`record ${id} is ${status?.status}`);
      if (status.pendingEvents) throw new Error(`record ${id}: its event was not published`);
    }
    return {
      latencyMs,
      records: delivered,
      pollers,
      seconds,
      perSecond: delivered / seconds,
      meanBatch: received / batches,
      cpuUsPerDelivery: (used.user + used.system) / delivered,
    };
  };

  const pollers = DEPLOYED.maximumConcurrency;
  await simulate(0, 100, pollers); // warm-up: connections, CSRF token, JIT
  const calibration = await simulate(0, 400, pollers);
  const latencies = (process.env.BENCH_CAPACITY_LATENCIES ?? '300,1000').split(',').map(Number);
  const runs: SimulationRun[] = [];
  for (const latencyMs of latencies) {
    // About ten seconds of work per latency at the predicted rate, at least 200 records, in whole batches.
    const expected = recordsPerSecond(
      latencyMs + 1000 / (calibration.perSecond / (pollers * DEPLOYED.batchSize)),
    );
    const records = Math.min(500, Math.max(200, Math.round((expected * 10) / 20) * 20));
    runs.push(await simulate(latencyMs, records, pollers));
  }
  sqs.destroy();
  await Promise.all([sap.stop(), bus.stop()]);
  return { calibration, runs };
};

export const measureCapacity = async (): Promise<CapacityResult> => {
  const aws = await startLocalAws();
  try {
    return await runNodeJson<CapacityResult>([`${benchDir}/capacity.ts`, '--child'], {
      ...awsFreeEnv(),
      ...quietPowertools,
      ...aws.info.env,
      AWS_ENDPOINT_URL_SQS: aws.info.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: aws.info.dynamodb,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
  } finally {
    await aws.stop();
  }
};

const thousands = (value: number) => Math.round(value).toLocaleString('en-GB');

export interface CapacityReport {
  paper: string;
  simulation: string;
  notes: string[];
  ratios: number[];
}

/** The paper table for each downstream at the given latencies, and the simulation beside its prediction. */
export const capacityReport = (
  result: CapacityResult,
  memoryMb: number,
  latencies = [300, 1000],
): CapacityReport => {
  const cpuUs = result.calibration.cpuUsPerDelivery;
  const cycle = (latency: number) => Math.round(awsCycleMs(latency, cpuUs, memoryMb));
  const rows: string[][] = [];
  for (const downstream of ['SAP (erpDelivery)', 'Salesforce (crmDelivery)']) {
    for (const latency of latencies) {
      const perSecond = recordsPerSecond(cycle(latency));
      rows.push([
        downstream,
        `${latency} ms`,
        `${DEPLOYED.maximumConcurrency} × ${DEPLOYED.batchSize} = ${DEPLOYED.maximumConcurrency * DEPLOYED.batchSize}`,
        `${cycle(latency)} ms`,
        `${perSecond.toFixed(1)}/s`,
        thousands(perSecond * 3600),
        thousands(perSecond * 86_400),
        thousands(perSecond * 86_400 * 10),
      ]);
    }
  }
  const paper = markdownTable(
    [
      'downstream',
      'latency per call',
      'calls at once (maximumConcurrency × batchSize)',
      'batch cycle',
      'records/s',
      'records/hour',
      'records/day',
      'records/day at maximumConcurrency 20',
    ],
    rows,
  );
  const cycle0 = (1000 * DEPLOYED.maximumConcurrency * DEPLOYED.batchSize) / result.calibration.perSecond;
  const ratios: number[] = [];
  const simulation = markdownTable(
    [
      'injected SAP latency',
      'records',
      'predicted',
      'measured',
      'measured / predicted',
      'mean batch',
      'worker CPU per delivery',
    ],
    [result.calibration, ...result.runs].map((run) => {
      const predicted = recordsPerSecond(cycle0 + run.latencyMs);
      const r = run.perSecond / predicted;
      if (run !== result.calibration) ratios.push(r);
      return [
        `${run.latencyMs} ms${run === result.calibration ? ' (calibration: the local cycle)' : ''}`,
        String(run.records),
        run === result.calibration ? '—' : `${predicted.toFixed(1)}/s`,
        `${run.perSecond.toFixed(1)}/s`,
        run === result.calibration ? '—' : `${r.toFixed(2)}`,
        run.meanBatch.toFixed(1),
        `${Math.round(run.cpuUsPerDelivery)} µs`,
      ];
    }),
  );
  const notes = [
    `Paper: batch cycle = the event source's receive and delete (${SQS_AROUND_BATCH_MS} ms together, stated) + claim, outcome and outbox UpdateItems (${ALLOWANCE.dynamoMs} ms each, stated) + the event's PutEvents (${ALLOWANCE.eventBridgeMs} ms, stated) + the downstream's latency + ` +
      `the CPU of 10 deliveries (${Math.round(cpuUs)} µs each on a full core, measured below at 0 ms; an upper bound, as it includes the poller's own SQS client) at ${memoryMb} MB, that is ${(ALLOWANCE.fullCpuMb / memoryMb).toFixed(2)} × slower; ` +
      'the 10 records of a batch run at once (Powertools BatchProcessor, processInParallel true by default), so a batch costs one latency, not ten. ' +
      'First attempts only: a transient failure comes back after 30 s × 2^(attempt-1) and takes a place in a later batch.',
    `Simulation: ${DEPLOYED.maximumConcurrency} pollers at once (maximumConcurrency), pollOnce with batch ${DEPLOYED.batchSize}, the real worker handler, fauxqs + dynalite in their own process, the SAP sandbox (every POST delayed by inject({ delayMs })). ` +
      `Prediction = ${DEPLOYED.maximumConcurrency} × ${DEPLOYED.batchSize} / (local cycle ${cycle0.toFixed(0)} ms, measured at 0 ms latency, + latency).`,
    `Ten times the default: maximumConcurrency 2 → 20 (ERP_MAX_CONCURRENCY / CRM_MAX_CONCURRENCY at deploy): 20 invocations, each with its own CPU, so the cycle stays and the rate is ten times (last column), with 200 calls at once on the downstream. ` +
      `batchSize 10 → 100 is not the same: one invocation's CPU grows tenfold (cycle ${cycle(300)} → ${Math.round(awsCycleMs(300, cpuUs, memoryMb, 100))} ms at 300 ms latency), ` +
      `so it gives ${(recordsPerSecond(awsCycleMs(300, cpuUs, memoryMb, 100), 2, 100) / recordsPerSecond(cycle(300))).toFixed(1)} times. ` +
      "Either way it is ten times the load on SAP / Salesforce: agree it with their owners first. The account's Lambda concurrency (1,000 by default) is not the limit.",
  ];
  return { paper, simulation, notes, ratios };
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else {
    const result = await measureCapacity();
    const report = capacityReport(result, 512);
    console.log([report.paper, '', report.simulation, '', ...report.notes].join('\n'));
  }
}
