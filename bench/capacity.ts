import { setTimeout as pause } from 'node:timers/promises';
import { BATCH_CONCURRENCY } from '../lib/delivery/message.ts';
import { MAX_COLLECTION_SIZE } from '../lib/downstream/crm/collections.ts';
import { erpBatchSizeFrom } from '../lib/downstream/erp/config.ts';
import { localClientConfig } from '../local/aws.ts';
import { eventSourceOfFunction } from '../local/eventSources.ts';
import { type ResolvedServerlessConfig, resolvedServerlessConfig } from '../local/serverlessConfig.ts';
import { ALLOWANCE } from './costModel.ts';
import { startLocalAws } from './localAws.ts';
import { awsFreeEnv, benchDir, quietPowertools, runNodeJson } from './proc.ts';
import { markdownTable } from './table.ts';

/** One delivery worker's settings as deployed: its event source, and the records one downstream call carries. */
export interface WorkerSettings {
  /** serverless.yml's function name. */
  functionName: 'erpDelivery' | 'crmDelivery';
  /** Messages per invocation at most (the event source's `batchSize`). */
  batchSize: number;
  /** The event source's `maximumBatchingWindow`, s. */
  batchingWindowSeconds: number;
  /** Concurrent invocations at most (the event source's `maximumConcurrency`). */
  maximumConcurrency: number;
  /** Records per downstream call: ERP_BATCH_SIZE (SAP `$batch`), a Collections call's 200 (Salesforce). */
  callSize: number;
}

export interface DeployedDelivery {
  erp: WorkerSettings;
  crm: WorkerSettings;
}

/**
 * The delivery workers' settings from the resolved serverless.yml (`osls print`): the event sources' batch size,
 * window and maximumConcurrency, and ERP_BATCH_SIZE from erpDelivery's environment.
 *
 * @example
 * deployedDeliveryOf(config).erp // { functionName: 'erpDelivery', batchSize: 200, batchingWindowSeconds: 1, maximumConcurrency: 2, callSize: 50 }
 */
export const deployedDeliveryOf = (config: ResolvedServerlessConfig): DeployedDelivery => {
  const of = (functionName: WorkerSettings['functionName'], callSize: number): WorkerSettings => {
    const source = eventSourceOfFunction(config, functionName);
    if (source.maximumConcurrency === undefined)
      throw new Error(`capacity: ${functionName}'s event source sets no maximumConcurrency`);
    return {
      functionName,
      batchSize: source.batchSize,
      batchingWindowSeconds: source.batchingWindowSeconds,
      maximumConcurrency: source.maximumConcurrency,
      callSize,
    };
  };
  const environment = Object.fromEntries(
    Object.entries({
      ...config.provider.environment,
      ...config.functions?.erpDelivery?.environment,
    }).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
  return {
    erp: of('erpDelivery', erpBatchSizeFrom(environment)),
    crm: of('crmDelivery', MAX_COLLECTION_SIZE),
  };
};

/**
 * The deployed settings, from serverless.yml as resolved for `npm start` (the last resolution cached, else resolved
 * now, as soak/campaign.ts reads the batching window): the one source of truth.
 */
export const deployedDelivery = async (): Promise<DeployedDelivery> =>
  deployedDeliveryOf(await resolvedServerlessConfig());

/** AWS round trips around a batch (stated, not measured): the event source's receive and delete. */
export const SQS_AROUND_BATCH_MS = 2 * ALLOWANCE.sqsMs;
/**
 * A record's writes after its call, one after the other (lib/delivery/recordOutcome.ts, lib/outbox/publish.ts): the
 * outcome's UpdateItem, the feed entry's UpdateItem, PutEvents, the outbox emptied (UpdateItem).
 */
export const OUTCOME_MS = 3 * ALLOWANCE.dynamoMs + ALLOWANCE.eventBridgeMs;

/** The calls a batch of `records` is split into: full calls of `callSize`, then the rest. */
export const callSizes = (records: number, callSize: number): number[] =>
  Array.from({ length: Math.ceil(records / callSize) }, (_, i) => Math.min(callSize, records - i * callSize));

export interface SimulationRun {
  latencyMs: number;
  records: number;
  pollers: number;
  seconds: number;
  perSecond: number;
  /** Mean messages per received batch. */
  meanBatch: number;
  /** Mean SAP calls per batch (`$batch` and single POSTs the sandbox answered). */
  meanCalls: number;
  /** Worker process CPU per delivery, µs (full core). */
  cpuUsPerDelivery: number;
}

export interface CapacityResult {
  /** The settings simulated and modelled (serverless.yml). */
  deployed: DeployedDelivery;
  calibration: SimulationRun;
  runs: SimulationRun[];
}

/** Records a second at a batch cycle of `cycleMs` for `maximumConcurrency` invocations of `batch` records. */
export const recordsPerSecond = (cycleMs: number, concurrency: number, batch: number) =>
  (concurrency * batch) / (cycleMs / 1000);

/**
 * The cycle of a full batch on AWS (paper), as lib/delivery/deliverBatch.ts makes it: the event source's receive and
 * delete; then one call after another, each after a fresh read of the hold (GetItem) and its records' claims
 * (UpdateItem each, BATCH_CONCURRENCY at once), then the call's latency; each call's outcome writes and event
 * (OUTCOME_MS a record, BATCH_CONCURRENCY at once) run while the next call goes out, so the last call's are waited
 * for (or an earlier call's, if longer); plus the CPU of the batch's deliveries (measured on a full core) at the
 * worker's share of a vCPU (memory / 1,769 MB), added whole (no overlap with the waits assumed).
 */
export const awsCycleMs = (
  latencyMs: number,
  cpuUsPerDelivery: number,
  memoryMb: number,
  worker: Pick<WorkerSettings, 'batchSize' | 'callSize'>,
) => {
  let sent = SQS_AROUND_BATCH_MS;
  let recorded = 0;
  for (const size of callSizes(worker.batchSize, worker.callSize)) {
    const waves = Math.ceil(size / BATCH_CONCURRENCY);
    sent += ALLOWANCE.dynamoMs + waves * ALLOWANCE.dynamoMs + latencyMs;
    recorded = Math.max(recorded, sent + waves * OUTCOME_MS);
  }
  return (
    Math.max(sent, recorded) +
    ((worker.batchSize * cpuUsPerDelivery) / 1000) * Math.max(1, ALLOWANCE.fullCpuMb / memoryMb)
  );
};

/** Full batches each poller works through in a timed run (the cycle is measured over several). */
const BATCHES_PER_POLLER = 5;

const child = async (deployed: DeployedDelivery): Promise<CapacityResult> => {
  const worker = deployed.erp;
  process.env.ERP_BATCH_SIZE = String(worker.callSize);
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
    // Seeded whole before the clock starts, 500 at a time (a request's most).
    const ids: string[] = [];
    for (let left = records; left > 0; left -= 500) ids.push(...(await seed(Math.min(500, left))));
    // Every SAP call delayed: a `$batch` call (a slice of ERP_BATCH_SIZE) and a lone record's POST alike.
    if (latencyMs > 0)
      sap.inject(
        ...Array.from({ length: records }, () => ({ on: 'batch' as const, delayMs: latencyMs })),
        ...Array.from({ length: records }, () => ({ on: 'post' as const, delayMs: latencyMs })),
      );
    const requestsBefore = sap.requests.length;
    let delivered = 0;
    let batches = 0;
    let received = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const poller = async () => {
      let idleSince: number | undefined;
      while (delivered < records) {
        const result = await pollOnce({
          sqs,
          queueUrl,
          handler: deliveryWorker,
          batchSize: worker.batchSize,
          batchingWindowSeconds: worker.batchingWindowSeconds,
        });
        if (result.failed > 0) throw new Error(`worker reported ${result.failed} failures`);
        if (result.received === 0) {
          // The other poller's last batch is still in flight (its messages hidden): wait for it.
          idleSince ??= performance.now();
          if (performance.now() - idleSince > 120_000)
            throw new Error(`queue empty after ${delivered}/${records}`);
          await pause(20);
          continue;
        }
        idleSince = undefined;
        batches++;
        received += result.received;
        delivered += result.deleted;
      }
    };
    await Promise.all(Array.from({ length: pollers }, poller));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    sap.clearFaults();
    const calls = sap.requests.slice(requestsBefore).filter((request) => request.method === 'POST').length;
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
      meanCalls: calls / batches,
      cpuUsPerDelivery: (used.user + used.system) / delivered,
    };
  };

  const pollers = worker.maximumConcurrency;
  const timed = pollers * worker.batchSize * BATCHES_PER_POLLER;
  await simulate(0, pollers * worker.batchSize, pollers); // warm-up: connections, CSRF token, JIT
  const calibration = await simulate(0, timed, pollers);
  const latencies = (process.env.BENCH_CAPACITY_LATENCIES ?? '300,1000').split(',').map(Number);
  const runs: SimulationRun[] = [];
  for (const latencyMs of latencies) runs.push(await simulate(latencyMs, timed, pollers));
  sqs.destroy();
  await Promise.all([sap.stop(), bus.stop()]);
  return { deployed, calibration, runs };
};

export const measureCapacity = async (): Promise<CapacityResult> => {
  const deployed = await deployedDelivery();
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
      BENCH_CAPACITY_DEPLOYED: JSON.stringify(deployed),
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

const DOWNSTREAMS = [
  { name: 'SAP (erpDelivery)', key: 'erp', call: '`$batch`' },
  { name: 'Salesforce (crmDelivery)', key: 'crm', call: 'Collections' },
] as const;

/** The paper table for each downstream at the given latencies, and the simulation beside its prediction. */
export const capacityReport = (
  result: CapacityResult,
  memoryMb: number,
  latencies = [300, 1000],
): CapacityReport => {
  const { deployed } = result;
  const cpuUs = result.calibration.cpuUsPerDelivery;
  const cycle = (latency: number, worker: WorkerSettings) =>
    Math.round(awsCycleMs(latency, cpuUs, memoryMb, worker));
  const rate = (latency: number, worker: WorkerSettings) =>
    recordsPerSecond(cycle(latency, worker), worker.maximumConcurrency, worker.batchSize);
  const rows: string[][] = [];
  for (const { name, key, call } of DOWNSTREAMS) {
    const worker = deployed[key];
    const calls = callSizes(worker.batchSize, worker.callSize);
    for (const latency of latencies) {
      const perSecond = rate(latency, worker);
      rows.push([
        name,
        `${latency} ms`,
        `${worker.maximumConcurrency} × ${worker.batchSize} = ${worker.maximumConcurrency * worker.batchSize}`,
        `${calls.length} ${call} of ${worker.callSize}`,
        `${cycle(latency, worker)} ms`,
        `${perSecond.toFixed(1)}/s`,
        thousands(perSecond * 3600),
        thousands(perSecond * 86_400),
        thousands((perSecond * 86_400 * 20) / worker.maximumConcurrency),
      ]);
    }
  }
  const paper = markdownTable(
    [
      'downstream',
      'latency per call',
      'records at once (maximumConcurrency × batchSize)',
      'calls per batch, one after another',
      'batch cycle',
      'records/s',
      'records/hour',
      'records/day',
      'records/day at maximumConcurrency 20',
    ],
    rows,
  );
  const erp = deployed.erp;
  const erpCalls = callSizes(erp.batchSize, erp.callSize).length;
  const pollers = result.calibration.pollers;
  const cycle0 = (1000 * pollers * erp.batchSize) / result.calibration.perSecond;
  const ratios: number[] = [];
  const simulation = markdownTable(
    [
      'injected SAP latency per call',
      'records',
      'predicted',
      'measured',
      'measured / predicted',
      'mean batch',
      'mean SAP calls per batch',
      'worker CPU per delivery',
    ],
    [result.calibration, ...result.runs].map((run) => {
      const predicted = recordsPerSecond(cycle0 + erpCalls * run.latencyMs, pollers, erp.batchSize);
      const r = run.perSecond / predicted;
      if (run !== result.calibration) ratios.push(r);
      return [
        `${run.latencyMs} ms${run === result.calibration ? ' (calibration: the local cycle)' : ''}`,
        String(run.records),
        run === result.calibration ? '—' : `${predicted.toFixed(1)}/s`,
        `${run.perSecond.toFixed(1)}/s`,
        run === result.calibration ? '—' : `${r.toFixed(2)}`,
        run.meanBatch.toFixed(1),
        run.meanCalls.toFixed(1),
        `${Math.round(run.cpuUsPerDelivery)} µs`,
      ];
    }),
  );
  const crm = deployed.crm;
  const slower = (ALLOWANCE.fullCpuMb / memoryMb).toFixed(2);
  const cpuMs = (worker: WorkerSettings) =>
    Math.round(((worker.batchSize * cpuUs) / 1000) * Math.max(1, ALLOWANCE.fullCpuMb / memoryMb));
  /** The cycle if a batched call's answer grows with its records (costModel's allowance per further record). */
  const growing = (worker: WorkerSettings, latency: number) => {
    const perRecord = ALLOWANCE.downstreamPerBatchedRecordMs;
    const calls = callSizes(worker.batchSize, worker.callSize);
    const extra = calls.reduce((sum, size) => sum + (size - 1) * perRecord, 0);
    return recordsPerSecond(cycle(latency, worker) + extra, worker.maximumConcurrency, worker.batchSize);
  };
  const lastWaves = (worker: WorkerSettings) =>
    Math.ceil((callSizes(worker.batchSize, worker.callSize).at(-1) ?? 0) / BATCH_CONCURRENCY);
  const doubled = (worker: WorkerSettings) =>
    recordsPerSecond(
      awsCycleMs(300, cpuUs, memoryMb, { ...worker, batchSize: 2 * worker.batchSize }),
      worker.maximumConcurrency,
      2 * worker.batchSize,
    ) / rate(300, worker);
  const notes = [
    `Settings from serverless.yml as resolved (\`osls print\`, custom.delivery): SAP batchSize ${erp.batchSize}, maximumBatchingWindow ${erp.batchingWindowSeconds} s, maximumConcurrency ${erp.maximumConcurrency}, ERP_BATCH_SIZE ${erp.callSize}; ` +
      `Salesforce batchSize ${crm.batchSize}, maximumBatchingWindow ${crm.batchingWindowSeconds} s, maximumConcurrency ${crm.maximumConcurrency}, Collections of ${crm.callSize}. ` +
      'A full batch is assumed (a backlog): it is invoked as soon as it is full, without waiting out the window; a lone record waits at most the window, which is latency, not capacity.',
    `Paper: a batch's calls go one after another (lib/delivery/deliverBatch.ts: the hold is read fresh before each call), ${erpCalls} for SAP, ${callSizes(crm.batchSize, crm.callSize).length} for Salesforce. Batch cycle = the event source's receive and delete (${SQS_AROUND_BATCH_MS} ms together, stated) + per call: ` +
      `the hold's GetItem and the call's claims (UpdateItem each, ${BATCH_CONCURRENCY} at once; ${ALLOWANCE.dynamoMs} ms each, stated) and the latency; then each record's outcome UpdateItem, feed entry UpdateItem, PutEvents (${ALLOWANCE.eventBridgeMs} ms, stated) and outbox UpdateItem, one after the other (${OUTCOME_MS} ms), ${BATCH_CONCURRENCY} records at once. ` +
      `A call's outcome writes run while the next call goes out, so only the last call's are waited for (SAP: ${lastWaves(erp)} × ${OUTCOME_MS} ms after its last call; Salesforce: ${lastWaves(crm)} × ${OUTCOME_MS} ms after its one call). ` +
      `Plus the CPU of the batch's deliveries (${Math.round(cpuUs)} µs each on a full core, measured below at 0 ms; an upper bound, as it includes the pollers' SQS client, the SAP sandbox and the event bus in the same process) at ${memoryMb} MB, that is ${slower} × slower: ` +
      `${cpuMs(erp)} ms a batch, added whole (assumed not to overlap the waits; on Lambda part of it runs while a call is out, so the cycle is somewhat shorter). ` +
      'First attempts only: a transient failure comes back after 30 s × 2^(attempt-1) and takes a place in a later batch.',
    `Latency per call is the whole call's answer time. If a batched call's answer grows with its records (bench/costModel.ts allows ${ALLOWANCE.downstreamPerBatchedRecordMs} ms per further record: a 50-record \`$batch\` at 300 + 490 ms, a 200-case Collections call at 300 + 1,990 ms), ` +
      `the rates at 300 ms become ${growing(erp, 300).toFixed(1)}/s for SAP and ${growing(crm, 300).toFixed(1)}/s for Salesforce; the simulation below delays each call by the same time whatever its size.`,
    `Simulation (SAP only: no Salesforce sandbox drives crmDelivery here): ${pollers} pollers at once (maximumConcurrency), pollOnce with batch ${erp.batchSize} and window ${erp.batchingWindowSeconds} s, ERP_BATCH_SIZE ${erp.callSize}, the real worker handler, fauxqs + dynalite in their own process, the local event bus, the SAP sandbox (every \`$batch\` call and single POST delayed by inject({ delayMs })); ` +
      `${BATCHES_PER_POLLER} full batches per poller in each run, after a warm-up batch each. ` +
      `Prediction = ${pollers} × ${erp.batchSize} / (local cycle ${cycle0.toFixed(0)} ms, measured at 0 ms latency, + ${erpCalls} calls × latency). ` +
      `Measured cycles shorter than predicted by ${result.runs.map((run) => `${Math.round(cycle0 + erpCalls * run.latencyMs - (1000 * pollers * erp.batchSize) / run.perSecond)} ms at ${run.latencyMs} ms`).join(', ')}: ` +
      'the prediction adds the whole local cycle to the latency, but on it the outcome writes of a call (and their CPU) run while the next call waits on SAP, so part of the 0 ms cycle hides behind the latency; the paper model counts that overlap for the writes but not for the CPU, so it errs low.',
    `Ten times the default: maximumConcurrency ${erp.maximumConcurrency} → 20 (ERP_MAX_CONCURRENCY / CRM_MAX_CONCURRENCY at deploy): 20 invocations, each with its own CPU, so the cycle stays and the rate is ten times (last column), with 20 calls at once on the downstream. ` +
      `A larger batchSize is not the same lever: its calls go one after another and its CPU grows with it, so batchSize ${erp.batchSize} → ${2 * erp.batchSize} gives ${doubled(erp).toFixed(2)} times for SAP and ${doubled(crm).toFixed(2)} times for Salesforce at 300 ms. ` +
      "Either way it is more load on SAP / Salesforce: agree it with their owners first. The account's Lambda concurrency (1,000 by default) is not the limit.",
  ];
  return { paper, simulation, notes, ratios };
};

if (import.meta.main) {
  if (process.argv[2] === '--child') {
    const deployed = JSON.parse(process.env.BENCH_CAPACITY_DEPLOYED ?? 'null') as DeployedDelivery | null;
    if (!deployed) throw new Error('capacity --child: BENCH_CAPACITY_DEPLOYED is not set');
    process.stdout.write(`${JSON.stringify(await child(deployed))}\n`);
  } else {
    const result = await measureCapacity();
    const report = capacityReport(result, 512);
    console.log([report.paper, '', report.simulation, '', ...report.notes].join('\n'));
  }
}
