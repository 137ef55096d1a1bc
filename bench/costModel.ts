/**
 * The AWS cost per million records (bench/prices.ts: eu-west-1, on-demand), itemised per service, for a 1-record
 * sales request, a 10-record one, a 500-record one and a case; beside it the same with an HTTP API instead of the
 * REST API, and with the AWS SDK clients instead of the small JSON-protocol client.
 *
 * Measured, not assumed: the intake handlers' CPU per request and their AWS calls by operation (bench/intakeCost.ts,
 * passed in), the sizes of real status records and queue messages (records of testkit/factories normalised by
 * lib/validation, status records built by lib/intake's newStatusRecord, marshalled by lib/store's toItem), and the
 * bytes of the log lines a request and a delivery write at the deployed log level (the service's own logger and
 * metrics objects, Powertools' default level INFO as serverless.yml sets no POWERTOOLS_LOG_LEVEL, written to a
 * counted stdout in a child process). Stated allowances (ALLOWANCE below): AWS round trips, the downstream's
 * latency, Lambda's CPU share at a memory size, Lambda's platform log lines.
 *
 *   node bench/costModel.ts            # prints the tables (runs bench/intakeCost.ts first)
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deployedEventSource } from './deployedDelivery.ts';
import type { CallCounts } from './instantAws.ts';
import type { IntakeRow } from './intakeCost.ts';
import { PRICE_CHECKS, PRICES, PRICES_AS_OF, PRICES_REGION } from './prices.ts';
import { baseEnv, benchDir, projectRoot, runNodeJson } from './proc.ts';
import { markdownTable } from './table.ts';

/** What is not measured here, stated. */
export const ALLOWANCE = {
  /** One DynamoDB PutItem/UpdateItem/Query round trip from Lambda in the same region, ms. */
  dynamoMs: 8,
  /** One SQS SendMessageBatch round trip, ms. */
  sqsMs: 15,
  /** One EventBridge PutEvents round trip, ms. */
  eventBridgeMs: 20,
  /** The downstream's answer time per delivery (SAP or Salesforce), ms: the capacity table's latency. */
  downstreamMs: 300,
  /**
   * What each further record adds to a batched call's answer time (a `$batch` change set, a Collections record), ms:
   * a 200-case Collections call then answers in 300 + 199 × 10 ≈ 2.3 s.
   */
  downstreamPerBatchedRecordMs: 10,
  /** Lambda gives a function one vCPU at 1,769 MB and a share in proportion below it. */
  fullCpuMb: 1769,
  /** Invocations that start a new execution environment (the init phase is billed). */
  coldShare: 0.01,
  /** Cold start of our bundle (README: 23-26 ms on a full core) and what the SDK adds to it (README: 37-40 ms). */
  coldStartMs: 25,
  sdkColdStartExtraMs: 38.5,
  /** Warm CPU per request with the SDK clients instead (README, Benchmarks: same run as ours). */
  sdkWarmUs: { sales1: 2473, sales500: 89_800, case: 2365 },
  oursWarmUsReadme: { sales1: 1388, sales500: 57_600, case: 1376 },
  /** Worker CPU per delivery on a full core when not measured in the same run (bench/RESULTS.md, worker table). */
  workerCpuUsPerDelivery: 4210,
  /** Empty long polls of Lambda's SQS pollers while idle: about 5 pollers per queue, one 20 s poll each. */
  idleReceivesPerQueueMonth: 5 * 3 * 60 * 24 * 30.44,
  /** Reconciler invocation: its CPU on a full core, ms, and its calls (one Query per kind). */
  reconcilerCpuMs: 5,
  /** Lambda platform lines per invocation: START, END and REPORT (written below, with representative values). */
} as const;

const MB_PER_GB = 1024;
const HOURS_PER_MONTH = 730;
const MINUTES_PER_MONTH = HOURS_PER_MONTH * 60;

/** DynamoDB item size: attribute names plus values (strings UTF-8, numbers about 1 byte per 2 digits + 1). */
type AttributeValue = Record<string, unknown>;
const valueBytes = (value: AttributeValue): number => {
  if ('S' in value) return Buffer.byteLength(value.S as string);
  if ('N' in value) return Math.ceil(String(value.N).replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('M' in value)
    return 3 + itemBytes(value.M as Record<string, AttributeValue>) + Object.keys(value.M as object).length;
  if ('L' in value) return 3 + (value.L as AttributeValue[]).reduce((sum, v) => sum + valueBytes(v) + 1, 0);
  if ('SS' in value) return (value.SS as string[]).reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  throw new Error(`size of ${JSON.stringify(value)}`);
};
export const itemBytes = (item: Record<string, AttributeValue>): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);

export interface Measured {
  /**
   * Status record sizes (bytes) through a record's life: as intake creates it, claimed, delivered (with its history
   * step and its event in the outbox), published (outbox emptied), purged (personal fields removed).
   */
  items: Record<
    'sales' | 'case',
    {
      accepted: number;
      claimed: number;
      delivered: number;
      /** Delivered, as before the cut: the whole event in the outbox. */
      deliveredFullEvent: number;
      published: number;
      /** Published, with its webhook attempt noted in its story (`webhookStory`). */
      webhooked: number;
      purged: number;
      /** Without the console's story (`story`, `webhookStory`), as before it: delivered, published, purged. */
      withoutStory: { delivered: number; published: number; purged: number };
    }
  >;
  /** Queue message body bytes. */
  messageBytes: Record<'sales' | 'case', number>;
  /** Bytes written to stdout at the deployed level. */
  logs: {
    /** Intake, per accepted request: the INFO line and the EMF line. */
    intakeRequest: Record<'sales1' | 'sales10' | 'sales500' | 'case', number>;
    /** Worker: the INFO line per delivered record; the EMF line of a batch of 10 delivered. */
    deliveredRecord: number;
    workerBatchEmf: number;
    /** Reconciler, per invocation with nothing to do: its EMF lines. */
    reconcilerEmf: number;
    /** Lambda's START, END and REPORT lines of one invocation. */
    platform: number;
  };
  logLevel: string;
}

/** The child: builds real records and writes real log lines to a counted stdout. */
const child = async (): Promise<Measured> => {
  let counted = 0;
  const write = process.stdout.write.bind(process.stdout);
  const { salesRegistrationInput, caseInput } = await import('../testkit/factories/records.ts');
  const { validateSalesRegistrations } = await import('../lib/validation/salesRegistration.ts');
  const { validateCaseRecord } = await import('../lib/validation/caseRecord.ts');
  const { newStatusRecord } = await import('../lib/intake/acceptRecords.ts');
  const { toItem } = await import('../lib/store/statusRecords.ts');
  const { logger } = await import('../lib/observability/logger.ts');
  const { countRecords, OutcomeTally, metrics } = await import('../lib/observability/metrics.ts');
  const { publishReconcileMetrics } = await import('../lib/reconcile/reconcile.ts');

  const sales = validateSalesRegistrations([salesRegistrationInput()]);
  const cases = validateCaseRecord(caseInput());
  if (!sales.ok || !cases.ok) throw new Error('factory records invalid');
  const now = new Date('2026-11-22T12:00:00.000Z');
  const { stateChangeOf } = await import('../lib/events/stateChange.ts');
  const { pendingChangeOf } = await import('../lib/records/stateChange.ts');
  const { retentionTimes } = await import('../lib/records/retention.ts');
  const { withoutPersonalData } = await import('../lib/retention/personalFields.ts');
  const { statusKeyOf } = await import('../lib/records/keys.ts');
  const { encodeStoryEntry } = await import('../lib/records/story.ts');
  // The shapes lib/store/statusUpdates.ts writes (its expressions, applied here to objects).
  const lifecycle = (kind: 'salesRegistration' | 'caseRecord', record: object, downstreamId: string) => {
    const id = randomUUID().replaceAll('-', '');
    const request = { kind, records: [], requestId: randomUUID(), owner: 'example-dealer' };
    // biome-ignore lint/suspicious/noExplicitAny: the normalised record of either kind
    const accepted = newStatusRecord(id, request, record as any, now);
    const at = new Date('2026-11-22T12:00:01.234Z');
    const claimed = { ...accepted, leaseUntil: '2026-11-22T12:01:31.234Z' };
    const { openKind: _o, dueAt: _d, leaseUntil: _l, ...rest } = claimed;
    const event = pendingChangeOf(claimed, {
      state: 'delivered',
      attempts: 1,
      sequence: 1,
      at,
      downstreamId,
    });
    const delivered = {
      ...rest,
      status: 'delivered' as const,
      statusKey: statusKeyOf(kind, 'delivered'),
      attempts: 1,
      updatedAt: at.toISOString(),
      downstreamId,
      history: [{ at: at.toISOString(), status: 'delivered' as const, reached: true, downstreamId }],
      // The console's story (lib/records/story.ts): the attempt, with its duration, in the outcome's own write.
      story: [
        encodeStoryEntry(
          {
            at: at.toISOString(),
            type: 'attempt',
            downstream: kind === 'caseRecord' ? 'crm' : 'erp',
            status: null,
            durationMs: 412,
          },
          { recordId: id },
        ),
      ],
      pendingEvents: [event],
      eventsKind: kind,
      eventsDueAt: '2026-11-22T12:01:01.234Z',
      purgeKind: kind,
      ...retentionTimes('delivered', at, { personalDataDays: 30, recordDays: 400, testDays: 7 }),
    };
    const { pendingEvents: _p, eventsKind: _k, eventsDueAt: _e, ...published } = delivered;
    // The dispatcher's write of its own: the webhook attempt (status, duration, webhook-id) on the record.
    const webhooked = {
      ...published,
      webhookStory: [
        encodeStoryEntry(
          {
            at: '2026-11-22T12:00:01.734Z',
            type: 'webhook',
            client: 'example-dealer',
            webhookId: `${id}:${at.toISOString()}`,
            status: 200,
            durationMs: 87,
          },
          { recordId: id },
        ),
      ],
    };
    const { purgeKind: _pk, purgeAt: _pa, ...kept } = webhooked;
    const purged = {
      ...kept,
      record: withoutPersonalData(kind, accepted.record),
      personalDataRemovedAt: '2026-12-22T12:01:00.000Z',
    };
    const bare = <T extends object>(item: T) => {
      const {
        story: _s,
        webhookStory: _w,
        ...rest
      } = item as T & { story?: unknown; webhookStory?: unknown };
      return rest;
    };
    const message = JSON.stringify({ id, kind, requestId: accepted.requestId, record });
    const size = (item: object) =>
      itemBytes(toItem(item as never) as unknown as Record<string, AttributeValue>);
    return {
      sizes: {
        accepted: size(accepted),
        claimed: size(claimed),
        delivered: size(delivered),
        deliveredFullEvent: size({
          ...bare(delivered),
          pendingEvents: [stateChangeOf(claimed, { state: 'delivered', attempts: 1, at, downstreamId })],
        }),
        published: size(published),
        webhooked: size(webhooked),
        purged: size(purged),
        withoutStory: {
          delivered: size(bare(delivered)),
          published: size(bare(published)),
          purged: size(bare(purged)),
        },
      },
      message: Buffer.byteLength(message),
    };
  };
  const salesLife = lifecycle('salesRegistration', sales.value[0], '49000001');
  const caseLife = lifecycle('caseRecord', cases.value, '500Aa00000XyZ12AAB');

  // Log lines, counted as they reach stdout (Powertools writes through a Console on process.stdout).
  process.stdout.write = ((chunk: string | Uint8Array) => {
    counted += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    return true;
  }) as typeof process.stdout.write;
  const bytesOf = (emit: () => void) => {
    const before = counted;
    emit();
    return counted - before;
  };
  const intake = (n: number, kind: 'erp' | 'crm') =>
    bytesOf(() => {
      const requestId = randomUUID();
      if (kind === 'erp') logger.info('sales registrations accepted', { requestId, count: n });
      else logger.info('case accepted', { requestId, count: 1 });
      countRecords('accepted', kind, n);
    });
  const keys = () => ({
    correlationId: randomUUID(),
    recordId: randomUUID().replaceAll('-', ''),
    downstream: 'erp',
  });
  const deliveredRecord = bytesOf(() => logger.info('delivered', { ...keys(), attempt: 1 }));
  const workerBatchEmf = bytesOf(() => {
    const tally = new OutcomeTally();
    for (let i = 0; i < 10; i++) tally.add('delivered', 'erp', 1000 + Math.floor(Math.random() * 9000));
    tally.publish();
  });
  const reconcilerEmf = bytesOf(() =>
    publishReconcileMetrics({
      requeued: { salesRegistration: 0, caseRecord: 0 },
      oldestWaitSeconds: 0,
      unqueued: 0,
      // Neither downstream held: the run still reports each hold (the held alarm's metric).
      holds: { erp: { held: false }, crm: { held: false } },
      probes: { salesRegistration: 0, caseRecord: 0 },
      deferred: [],
    } as unknown as Parameters<typeof publishReconcileMetrics>[0]),
  );
  const logs = {
    intakeRequest: {
      sales1: intake(1, 'erp'),
      sales10: intake(10, 'erp'),
      sales500: intake(500, 'erp'),
      case: intake(1, 'crm'),
    },
    deliveredRecord,
    workerBatchEmf,
    reconcilerEmf,
    platform: 0,
  };
  void metrics;
  process.stdout.write = write;
  // Lambda's own lines per invocation, with representative values (arm64, 512 MB).
  const request = randomUUID();
  logs.platform = Buffer.byteLength(
    `START RequestId: ${request} Version: $LATEST\n` +
      `END RequestId: ${request}\n` +
      `REPORT RequestId: ${request}\tDuration: 31.42 ms\tBilled Duration: 32 ms\tMemory Size: 512 MB\tMax Memory Used: 96 MB\t\n`,
  );
  return {
    items: { sales: salesLife.sizes, case: caseLife.sizes },
    messageBytes: { sales: salesLife.message, case: caseLife.message },
    logs,
    logLevel: logger.getLevelName(),
  };
};

/** Runs the child with the deployed settings of serverless.yml (no log level: Powertools' default). */
export const measureCostInputs = async (): Promise<Measured> => {
  const env = { ...baseEnv() };
  for (const name of Object.keys(env))
    if (name.startsWith('POWERTOOLS_') || name.startsWith('AWS_')) delete env[name];
  return runNodeJson<Measured>([join(benchDir, 'costModel.ts'), '--child'], {
    ...env,
    POWERTOOLS_SERVICE_NAME: 'dealer-gateway',
    POWERTOOLS_METRICS_NAMESPACE: 'DealerGateway',
    RECONCILE_AFTER_SECONDS: '300',
    // As Lambda sets them: Powertools adds the trace id to every line.
    AWS_LAMBDA_FUNCTION_NAME: 'dealer-gateway-prod-salesRegistration',
    _X_AMZN_TRACE_ID:
      'Root=1-6740a1b2-3c4d5e6f7a8b9c0d1e2f3a4b;Parent=5a6b7c8d9e0f1a2b;Sampled=0;Lineage=1:abcd1234:0',
  });
};

// ---- the model ---------------------------------------------------------------------------------------------

/** Memory sizes from serverless.yml (provider default and per function). */
export const deployedMemory = async () => {
  const yml = await readFile(join(projectRoot, 'serverless.yml'), 'utf8');
  const provider = Number(/^ {2}memorySize: (\d+)/m.exec(yml)?.[1] ?? 1024);
  const of = (fn: string) => {
    const block = new RegExp(`^ {2}${fn}:\\n((?: {4}.*\\n|\\n)*)`, 'm').exec(yml)?.[1] ?? '';
    return Number(/^ {4}memorySize: (\d+)/m.exec(block)?.[1] ?? provider);
  };
  return {
    salesRegistration: of('salesRegistration'),
    crmCase: of('crmCase'),
    erpDelivery: of('erpDelivery'),
    crmDelivery: of('crmDelivery'),
    reconciler: of('reconciler'),
  };
};

export type Memory = Awaited<ReturnType<typeof deployedMemory>>;

/** Whether serverless.yml declares the sparse `frame` index on sales records (INCLUDE of status fields). */
export const deployedFrameIndex = async () =>
  /IndexName: frame\b/.test(await readFile(join(projectRoot, 'serverless.yml'), 'utf8'));

export interface Scenario {
  name: string;
  kind: 'sales' | 'case';
  records: number;
  /** Intake CPU per request on a full core, µs (measured; 10 records: interpolated). */
  cpuUs: number;
  /** DynamoDB PutItem and SQS SendMessageBatch calls per request, and the send's bytes. */
  puts: number;
  sends: number;
  sendBytes: number;
  logKey: 'sales1' | 'sales10' | 'sales500' | 'case';
}

/** The four requests from the intake benchmark's rows (10 records: between 1 and 500, per record). */
export const scenariosFrom = (rows: IntakeRow[], measured: Measured): Scenario[] => {
  const row = (name: string) => {
    const found = rows.find((r) => r.name === name);
    if (!found) throw new Error(`no intake row ${name}`);
    return found;
  };
  const calls = (counts: CallCounts, op: string) => counts[op] ?? { calls: 0, bytes: 0 };
  const from = (name: string, kind: 'sales' | 'case', logKey: Scenario['logKey']): Scenario => {
    const r = row(name);
    const send = calls(r.oursCalls, 'SQS.SendMessageBatch');
    return {
      name,
      kind,
      records: r.records,
      cpuUs: r.oursCpuUs,
      puts: calls(r.oursCalls, 'DynamoDB.PutItem').calls,
      // (a check: the intake benchmark counted the calls this model prices)
      sends: send.calls,
      sendBytes: send.calls ? send.bytes / send.calls : 0,
      logKey,
    };
  };
  const one = from('sales 1 record (JSON)', 'sales', 'sales1');
  if (one.puts === 0 || one.sends === 0)
    throw new Error('intake rows carry no PutItem / SendMessageBatch counts');
  const many = from('sales 500 records (JSON)', 'sales', 'sales500');
  const perRecordUs = (many.cpuUs - one.cpuUs) / 499;
  const ten: Scenario = {
    name: 'sales 10 records (JSON)',
    kind: 'sales',
    records: 10,
    cpuUs: one.cpuUs + 9 * perRecordUs,
    puts: 10,
    sends: 1,
    sendBytes: one.sendBytes - measured.messageBytes.sales + 10 * measured.messageBytes.sales,
    logKey: 'sales10',
  };
  return [one, ten, many, from('case (JSON)', 'case', 'case')];
};

export interface Variant {
  name: string;
  apiRequestUsd: number;
  /** Extra CPU per request on a full core, µs, and extra cold start, ms. */
  extraCpuUs: (s: Scenario) => number;
  extraColdMs: number;
}

const sdkExtraUs = (s: Scenario) => {
  const { sdkWarmUs: sdk, oursWarmUsReadme: ours } = ALLOWANCE;
  if (s.kind === 'case') return sdk.case - ours.case;
  const one = sdk.sales1 - ours.sales1;
  const many = sdk.sales500 - ours.sales500;
  return one + ((many - one) * (s.records - 1)) / 499;
};

export const VARIANTS: Variant[] = [
  {
    name: 'as deployed (REST API, small client)',
    apiRequestUsd: PRICES.restApiRequest.usd,
    extraCpuUs: () => 0,
    extraColdMs: 0,
  },
  { name: 'HTTP API instead', apiRequestUsd: PRICES.httpApiRequest.usd, extraCpuUs: () => 0, extraColdMs: 0 },
  {
    name: 'SDK clients instead',
    apiRequestUsd: PRICES.restApiRequest.usd,
    extraCpuUs: sdkExtraUs,
    extraColdMs: ALLOWANCE.sdkColdStartExtraMs,
  },
];

export type Items = Record<string, number>;

/** Wall time on Lambda of CPU measured on a full core, at a memory size. */
const lambdaMs = (cpuMs: number, memoryMb: number) => cpuMs * Math.max(1, ALLOWANCE.fullCpuMb / memoryMb);
const gbSeconds = (ms: number, memoryMb: number) => (Math.ceil(ms) / 1000) * (memoryMb / MB_PER_GB);

/** WRU of a write of `bytes` (1 KB units). */
const wru = (bytes: number) => Math.ceil(bytes / 1024);

export interface CostOptions {
  memory: Memory;
  /** Worker CPU per delivery on a full core, µs. */
  workerCpuUs: number;
  downstreamMs?: number;
  /**
   * The `frame` index (sales records, and cases that name a frame number; INCLUDE id, status, attempts, updatedAt,
   * downstreamId, error): an entry of
   * well under 1 KB written at intake and rewritten by the outcome (the claim changes none of its attributes).
   */
  frameIndex?: boolean;
  /**
   * As before the cut: the claim moved `dueAt` in the `open` index (a delete and a put per record, which the lease
   * check in the reconciler's postpone made unnecessary).
   */
  claimMovesDue?: boolean;
  /** As before the second cut: the outbox kept the whole event (the delivered record then passed 1 KB). */
  fullOutboxEvents?: boolean;
  /** As before the console's story: no `story` on the record, no webhook attempt noted (no write of its own). */
  withoutStory?: boolean;
  /**
   * How the worker is fed and calls the downstream: records per invocation (the event source's batchSize, filled
   * by a backlog) and records per downstream call (1: one call per record, all of a batch at once). Default: 10
   * per invocation, one call per record (before batched delivery).
   */
  workerBatch?: Record<'sales' | 'case', WorkerBatch>;
  /** Settings compared in the worker table of the report (the first is the model's own when workerBatch is unset). */
  workerSettings?: WorkerSetting[];
}

/** A named way of feeding the worker, per kind of record. */
export interface WorkerSetting {
  name: string;
  batch: Record<'sales' | 'case', WorkerBatch>;
}

/** Records per worker invocation, and per downstream call (calls of one invocation go one after the other). */
export interface WorkerBatch {
  recordsPerInvocation: number;
  recordsPerCall: number;
}

/** Before batched delivery: a batch of 10, each record its own call, all 10 at once. */
export const ONE_CALL_PER_RECORD: WorkerBatch = { recordsPerInvocation: 10, recordsPerCall: 1 };

/** The most records one downstream call carries: SAP `$batch` (ERP_BATCH_SIZE default 50), Collections 200. */
export const RECORDS_PER_CALL_LIMIT = { sales: 50, case: 200 } as const;

/**
 * The worker fed `batchSize` records per invocation, sending them batched (as few calls as the protocols allow).
 *
 * @example
 * batchedWorker(200) // { sales: { recordsPerInvocation: 200, recordsPerCall: 50 }, case: { …, recordsPerCall: 200 } }
 */
export const batchedWorker = (batchSize: number): Record<'sales' | 'case', WorkerBatch> => ({
  sales: {
    recordsPerInvocation: batchSize,
    recordsPerCall: Math.min(batchSize, RECORDS_PER_CALL_LIMIT.sales),
  },
  case: { recordsPerInvocation: batchSize, recordsPerCall: Math.min(batchSize, RECORDS_PER_CALL_LIMIT.case) },
});

/**
 * Whether the deployed worker sends batched calls (lib/delivery hands a batch's records to the adapters' batched
 * calls) and the event source's batchSize (serverless.yml), read from the source.
 */
export const deployedWorker = async (): Promise<{ batched: boolean; batchSize: number }> => {
  const downstreams = await readFile(join(projectRoot, 'lib/delivery/downstreams.ts'), 'utf8');
  return {
    batched: /deliverSalesRegistrations\(/.test(downstreams),
    batchSize: (await deployedEventSource('erpDelivery')).batchSize,
  };
};

/** Claims, outcomes and events of one invocation go 16 at once (lib/delivery's BATCH_CONCURRENCY). */
const WORKER_WRITES_AT_ONCE = 16;

/**
 * Lambda time of one worker invocation, ms: the claims, the downstream calls, the outcome writes with their
 * events and the outbox's emptying, and the CPU of its deliveries at the memory's CPU share. One call per record
 * runs the batch's calls at once (one latency); batched calls go one after another, each a latency plus a little
 * per record it carries.
 */
export const workerInvocationMs = (
  batch: WorkerBatch,
  workerCpuUs: number,
  memoryMb: number,
  downstreamMs: number = ALLOWANCE.downstreamMs,
): number => {
  const records = batch.recordsPerInvocation;
  const waves = Math.ceil(records / WORKER_WRITES_AT_ONCE);
  const calls = batch.recordsPerCall <= 1 ? 1 : Math.ceil(records / batch.recordsPerCall);
  const perCall = Math.min(records, Math.max(1, batch.recordsPerCall));
  const downstream =
    batch.recordsPerCall <= 1
      ? downstreamMs
      : calls * (downstreamMs + (perCall - 1) * ALLOWANCE.downstreamPerBatchedRecordMs);
  return (
    waves * ALLOWANCE.dynamoMs + // claims
    downstream +
    waves * (ALLOWANCE.dynamoMs + ALLOWANCE.eventBridgeMs + ALLOWANCE.dynamoMs) + // outcome, event, outbox
    lambdaMs((records * workerCpuUs) / 1000, memoryMb)
  );
};

/** The cost of one million records sent in requests of the scenario, itemised, USD. */
export const costPerMillion = (s: Scenario, m: Measured, v: Variant, o: CostOptions): Items => {
  const requests = 1e6 / s.records;
  const sizes = m.items[s.kind];
  const storyless = o.withoutStory
    ? { ...sizes, ...sizes.withoutStory, webhooked: sizes.withoutStory.published }
    : sizes;
  const item = o.fullOutboxEvents ? { ...storyless, delivered: sizes.deliveredFullEvent } : storyless;
  const memIntake = s.kind === 'sales' ? o.memory.salesRegistration : o.memory.crmCase;
  const memWorker = s.kind === 'sales' ? o.memory.erpDelivery : o.memory.crmDelivery;
  const downstreamMs = o.downstreamMs ?? ALLOWANCE.downstreamMs;

  // Intake: CPU (stretched by the memory's CPU share) + waves of 16 parallel PutItems + the sends (parallel too).
  const putWaves = Math.ceil(s.puts / 16);
  const sendWaves = Math.ceil(s.sends / 16);
  const intakeMs =
    lambdaMs((s.cpuUs + v.extraCpuUs(s)) / 1000, memIntake) +
    putWaves * ALLOWANCE.dynamoMs +
    sendWaves * ALLOWANCE.sqsMs +
    ALLOWANCE.coldShare * lambdaMs(ALLOWANCE.coldStartMs + v.extraColdMs, memIntake);
  // Worker: per invocation, claims, the downstream call(s), outcomes, events, the outbox emptied; CPU of its
  // deliveries (workerInvocationMs).
  const workerBatch = o.workerBatch?.[s.kind] ?? ONE_CALL_PER_RECORD;
  const batchMs = workerInvocationMs(workerBatch, o.workerCpuUs, memWorker, downstreamMs);
  const batches = 1e6 / workerBatch.recordsPerInvocation;

  const sendChunks = s.sends * Math.max(1, Math.ceil(s.sendBytes / 65536));
  // The event source receives 10 messages a call (at most 256 KiB: 64 KiB chunks billed) and deletes 10 a call.
  const receivesPerBatch = Math.ceil(workerBatch.recordsPerInvocation / 10);
  const receiveChunks = receivesPerBatch * Math.ceil((10 * m.messageBytes[s.kind]) / 65536);
  const writeUnits =
    requests * s.puts * wru(item.accepted) + // intake's conditional PutItem
    1e6 * wru(Math.max(item.accepted, item.claimed)) + // the claim (UpdateItem: the larger of before and after)
    1e6 * wru(Math.max(item.claimed, item.delivered)) + // the outcome, with its history step and event
    1e6 * wru(Math.max(item.delivered, item.published)) + // the outbox emptied once the event is published
    1e6 * wru(Math.max(item.webhooked, item.purged)); // the personal fields removed after 30 days
  // The console's story: the webhook attempt noted on the record (the dispatcher's UpdateItem of `webhookStory`;
  // no index projects it, so no index write). The delivery side's entries ride in the outcome's write above.
  const webhookNoteUnits = o.withoutStory ? 0 : 1e6 * wru(Math.max(item.published, item.webhooked));
  // The `open` index (KEYS_ONLY, one unit per entry): written on create, removed at settle (before the cut, the
  // claim also moved it: a delete and a put).
  const openIndexUnits = o.claimMovesDue ? 4 : 2;
  const logBytes =
    requests * (m.logs.intakeRequest[s.logKey] + m.logs.platform) +
    1e6 * m.logs.deliveredRecord +
    batches * (m.logs.workerBatchEmf + m.logs.platform);

  return {
    'API Gateway requests': requests * v.apiRequestUsd,
    'Lambda requests (intake + worker)': (requests + batches) * PRICES.lambdaRequest.usd,
    'Lambda GB-s intake': requests * gbSeconds(intakeMs, memIntake) * PRICES.lambdaArmGbSecond.usd,
    'Lambda GB-s worker': batches * gbSeconds(batchMs, memWorker) * PRICES.lambdaArmGbSecond.usd,
    'SQS send': requests * sendChunks * PRICES.sqsRequest.usd,
    'SQS receive + delete': batches * (receiveChunks + receivesPerBatch) * PRICES.sqsRequest.usd,
    'DynamoDB table writes': writeUnits * PRICES.dynamoWriteUnit.usd,
    'DynamoDB webhook attempt noted (console story)': webhookNoteUnits * PRICES.dynamoWriteUnit.usd,
    'DynamoDB open index writes': 1e6 * openIndexUnits * PRICES.dynamoWriteUnit.usd,
    // A case that names a frame number has its entry too (the console's search by frame number): counted for every
    // case, the dearest reading, as web forms may ask for the frame number on every case.
    'DynamoDB frame index writes': o.frameIndex ? 1e6 * 2 * PRICES.dynamoWriteUnit.usd : 0,
    // `status` (INCLUDE, under 1 KB): put at intake, moved (delete + put) when the state changes; the claim, the
    // outbox and the purge change none of its attributes.
    'DynamoDB status index writes': 1e6 * 3 * PRICES.dynamoWriteUnit.usd,
    // `events` (put at settle, removed once published) and `purge` (put at settle, removed at the purge): KEYS_ONLY.
    'DynamoDB events + purge index writes': 1e6 * 4 * PRICES.dynamoWriteUnit.usd,
    'EventBridge events': 1e6 * PRICES.eventBridgeEvent.usd,
    'webhook calls (API destination; clients with a webhook)': 1e6 * PRICES.apiDestinationInvocation.usd,
    'CloudWatch Logs ingested': (logBytes / 1e9) * PRICES.logsIngestedGb.usd,
  };
};

/** Per month, whatever the traffic. */
export const fixedPerMonth = (m: Measured, o: CostOptions): Items => {
  const invocations = MINUTES_PER_MONTH;
  const reconcilerMs = lambdaMs(ALLOWANCE.reconcilerCpuMs, o.memory.reconciler) + 2 * ALLOWANCE.dynamoMs;
  // Custom metrics (name × dimension set; Powertools adds `service`): accepted, delivered, rejected, failed,
  // retried, deliveryLatency and requeued per downstream; oldestRequeuedWait.
  const metricCount = 7 * 2 + 1;
  return {
    'reconciler Lambda (requests + GB-s)':
      invocations *
      (PRICES.lambdaRequest.usd +
        gbSeconds(reconcilerMs, o.memory.reconciler) * PRICES.lambdaArmGbSecond.usd),
    // A Query of an index per kind reads at least 0.5 RRU (eventually consistent, as index reads are): the `open`,
    // `events` and `purge` indexes.
    'reconciler Query (open, events, purge indexes)': invocations * 3 * 2 * 0.5 * PRICES.dynamoReadUnit.usd,
    'reconciler logs':
      ((invocations * (m.logs.reconcilerEmf + m.logs.platform)) / 1e9) * PRICES.logsIngestedGb.usd,
    'SQS idle long polls (2 queues)': 2 * ALLOWANCE.idleReceivesPerQueueMonth * PRICES.sqsRequest.usd,
    [`custom metrics (${metricCount})`]: metricCount * PRICES.metricMonth.usd,
  };
};

const usd = (value: number) =>
  value >= 100 ? `$${value.toFixed(0)}` : value >= 1 ? `$${value.toFixed(2)}` : `$${value.toFixed(3)}`;
const sum = (items: Items) => Object.values(items).reduce((a, b) => a + b, 0);

export interface CostReport {
  tables: string;
  /** The largest item of the deployed 1-record sales request, and its share. */
  biggest: { item: string; usd: number; share: number };
  totals: Record<string, Record<string, number>>;
}

export const costReport = (rows: IntakeRow[], m: Measured, o: CostOptions): CostReport => {
  const scenarios = scenariosFrom(rows, m);
  const deployed = VARIANTS[0];
  const perScenario = scenarios.map((s) => costPerMillion(s, m, deployed, o));
  const itemNames = Object.keys(perScenario[0]);
  const itemised = markdownTable(
    ['per million records', ...scenarios.map((s) => s.name)],
    [
      ...itemNames.map((name) => [name, ...perScenario.map((items) => usd(items[name]))]),
      ['**total**', ...perScenario.map((items) => `**${usd(sum(items))}**`)],
    ],
  );
  const totals: Record<string, Record<string, number>> = {};
  const variants = markdownTable(
    ['variant: total per million records', ...scenarios.map((s) => s.name)],
    VARIANTS.map((v) => {
      totals[v.name] = Object.fromEntries(scenarios.map((s) => [s.name, sum(costPerMillion(s, m, v, o))]));
      return [v.name, ...scenarios.map((s) => usd(totals[v.name][s.name]))];
    }),
  );
  const fixed = fixedPerMonth(m, o);
  const fixedTable = markdownTable(
    ['fixed cost per month', 'USD'],
    [...Object.entries(fixed).map(([k, v]) => [k, usd(v)]), ['**total**', `**${usd(sum(fixed))}**`]],
  );
  // Fewer, larger worker invocations: the worker's share of the bill per setting.
  const workerTable = (() => {
    const settings = o.workerSettings ?? [];
    if (settings.length === 0) return '';
    const sales = scenarios.find((sc) => sc.name === 'sales 10 records (JSON)') as Scenario;
    const cases = scenarios.find((sc) => sc.kind === 'case') as Scenario;
    const workerUsd = (sc: Scenario, setting: WorkerSetting) => {
      const items = costPerMillion(sc, m, deployed, { ...o, workerBatch: setting.batch });
      const invocations = 1e6 / setting.batch[sc.kind].recordsPerInvocation;
      const logs =
        ((invocations * (m.logs.workerBatchEmf + m.logs.platform) + 1e6 * m.logs.deliveredRecord) / 1e9) *
        PRICES.logsIngestedGb.usd;
      return {
        worker:
          items['Lambda GB-s worker'] +
          invocations * PRICES.lambdaRequest.usd +
          items['SQS receive + delete'] +
          logs,
        total: sum(items),
      };
    };
    const memWorker = { sales: o.memory.erpDelivery, case: o.memory.crmDelivery };
    return markdownTable(
      [
        'worker fed',
        'records per invocation',
        'records per call (SAP / Salesforce)',
        'invocation (SAP / Salesforce)',
        'worker: Lambda + SQS receive/delete + its logs, per million (SAP / Salesforce)',
        'total per million (sales 10 per request / case)',
      ],
      settings.map((setting) => {
        const [s1, c1] = [workerUsd(sales, setting), workerUsd(cases, setting)];
        const ms = (kind: 'sales' | 'case') =>
          `${Math.round(workerInvocationMs(setting.batch[kind], o.workerCpuUs, memWorker[kind], o.downstreamMs))} ms`;
        return [
          setting.name,
          String(setting.batch.sales.recordsPerInvocation),
          `${setting.batch.sales.recordsPerCall} / ${setting.batch.case.recordsPerCall}`,
          `${ms('sales')} / ${ms('case')}`,
          `${usd(s1.worker)} / ${usd(c1.worker)}`,
          `${usd(s1.total)} / ${usd(c1.total)}`,
        ];
      }),
    );
  })();
  const one = perScenario[0];
  const [item, value] = Object.entries(one).sort(([, a], [, b]) => b - a)[0];
  const inputs = [
    `Prices: ${PRICES_REGION}, on-demand, as of ${PRICES_AS_OF} (bench/prices.ts names each page). Indexes: \`open\` (KEYS_ONLY)${o.frameIndex ? ', `frame` (sales, and cases counted as if each named a frame number; INCLUDE: 2 writes per record, at intake and at the outcome)' : ''}, \`status\` (INCLUDE), \`events\` and \`purge\` (KEYS_ONLY); every record settled publishes one event, and its client is assumed to have a webhook. Memory: intake ${o.memory.salesRegistration} MB, workers ${o.memory.erpDelivery} MB, reconciler ${o.memory.reconciler} MB (serverless.yml).`,
    `Measured: intake CPU per request ${scenarios.map((s) => `${s.name} ${(s.cpuUs / 1000).toFixed(2)} ms`).join(', ')} (full core; 10 records interpolated per record); ` +
      `status record ${m.items.sales.accepted} / ${m.items.sales.claimed} / ${m.items.sales.delivered} / ${m.items.sales.published} / ${m.items.sales.purged} B (sales: accepted, claimed, delivered, published, purged), ` +
      `${m.items.case.accepted} / ${m.items.case.claimed} / ${m.items.case.delivered} / ${m.items.case.published} / ${m.items.case.purged} B (case); message ${m.messageBytes.sales} B (sales), ${m.messageBytes.case} B (case); ` +
      `log bytes at ${m.logLevel}: intake ${m.logs.intakeRequest.sales1} B per 1-record request (INFO line + EMF), ${m.logs.deliveredRecord} B per delivered record, ` +
      `${m.logs.workerBatchEmf} B EMF per batch of 10, Lambda's START/END/REPORT ${m.logs.platform} B per invocation; worker CPU ${(o.workerCpuUs / 1000).toFixed(2)} ms per delivery.`,
    `Allowances: DynamoDB round trip ${ALLOWANCE.dynamoMs} ms, SQS send ${ALLOWANCE.sqsMs} ms (PutItems 16 at once), downstream ${ALLOWANCE.downstreamMs} ms per call (a batch's 10 at once), ` +
      `CPU stretched by ${ALLOWANCE.fullCpuMb} MB / memory (Lambda's CPU share), ${ALLOWANCE.coldShare * 100} % cold invocations of ${ALLOWANCE.coldStartMs} ms, ` +
      `no Idempotency-Key, every delivery first time right (a retry adds an UpdateItem, a ChangeMessageVisibility, a receive and a worker share), no free tier; ` +
      `log storage (${usd(PRICES.logsStoredGbMonth.usd)}/GB-month compressed, 30 days) and alarms left out. SDK: the README's warm CPU difference and +${ALLOWANCE.sdkColdStartExtraMs} ms per cold start. ` +
      'HTTP API loses API keys and usage plans (per-client throttle and quota at the gateway) and the contract-shaped gateway responses of deploy/apiKeys.cjs: key checks, throttling and quotas would move into the handlers.',
    "Message group ids cost nothing: each message names its client as its MessageGroupId (SQS fair queues), a feature of standard queues with no price of its own (SQS bills requests, each 64 KiB chunk one; https://aws.amazon.com/sqs/pricing/); the id and the body's `owner` add a few dozen bytes to a message, far from a chunk, and no request.",
  ];
  // The cuts, before and after, per scenario: the claim no longer moves the record in the `open` index; the outbox
  // keeps only what the record does not say.
  // (Those cuts came before the console's story: they are compared without it.)
  const before = scenarios.map((sc) =>
    sum(
      costPerMillion(sc, m, deployed, {
        ...o,
        claimMovesDue: true,
        fullOutboxEvents: true,
        withoutStory: true,
      }),
    ),
  );
  const firstCut = scenarios.map((sc) =>
    sum(costPerMillion(sc, m, deployed, { ...o, fullOutboxEvents: true, withoutStory: true })),
  );
  const storyless = scenarios.map((sc) => sum(costPerMillion(sc, m, deployed, { ...o, withoutStory: true })));
  const after = perScenario.map(sum);
  const cutTable = markdownTable(
    ['cuts: total per million records', ...scenarios.map((sc) => sc.name)],
    [
      ['before: the claim moved `dueAt`; whole events in the outbox', ...before.map(usd)],
      ['the reconciler checks the lease instead (open index 4 -> 2 writes)', ...firstCut.map(usd)],
      [
        `the outbox keeps the change only (delivered record ${m.items.sales.deliveredFullEvent} -> ${m.items.sales.withoutStory.delivered} B sales, ${m.items.case.deliveredFullEvent} -> ${m.items.case.withoutStory.delivered} B case)`,
        ...storyless.map(usd),
      ],
      [
        'saved',
        ...before.map(
          (b, i) => `${usd(b - storyless[i])} (${(((b - storyless[i]) / b) * 100).toFixed(0)} %)`,
        ),
      ],
    ],
  );
  // The console's story (lib/records/story.ts): before it, and with it.
  const storyTable = markdownTable(
    ["the console's story: total per million records", ...scenarios.map((sc) => sc.name)],
    [
      [
        `before: no story (delivered record ${m.items.sales.withoutStory.delivered} B sales, ${m.items.case.withoutStory.delivered} B case)`,
        ...storyless.map(usd),
      ],
      [
        `with it: the attempt in the outcome's write (delivered ${m.items.sales.delivered} B sales, ${m.items.case.delivered} B case: still one write unit), the webhook attempt a write of its own`,
        ...after.map(usd),
      ],
      [
        'added',
        ...storyless.map((b, i) => `${usd(after[i] - b)} (+${(((after[i] - b) / b) * 100).toFixed(1)} %)`),
      ],
    ],
  );
  const featureItems = [
    'DynamoDB status index writes',
    'DynamoDB events + purge index writes',
    'EventBridge events',
    'webhook calls (API destination; clients with a webhook)',
  ];
  const featureShare = (i: number) =>
    featureItems.reduce((total, name) => total + perScenario[i][name], 0) / after[i];
  const logShare = perScenario[0]['CloudWatch Logs ingested'] / after[0];
  const waste = [
    "Cut: the claim moved `dueAt` in the sparse `open` index (a delete and a put, one write unit each) only to keep the reconciler off a record being delivered; the reconciler's conditional postpone now checks the lease instead, and the claim writes no index attribute. " +
      `Saved ${usd(before[0] - firstCut[0])} per million records. And the outbox kept the whole event (ids, client, times, frame, dealer: all on the record already), which took a delivered record past 1 KB, so the outcome's write and the outbox's emptying cost two write units each; it now keeps the change only and the event is made from the record when published: ${usd(firstCut[0] - storyless[0])} more for sales (table above). ` +
      `What the events, the operations index and retention cost: the \`status\` index (3 writes a record), the \`events\` and \`purge\` indexes (4), EventBridge and the webhook calls, ${(featureShare(0) * 100).toFixed(0)} % of a 1-record request's total and ${(featureShare(2) * 100).toFixed(0)} % of a 500-record one's, plus two table writes (the outbox emptied, the personal fields removed). ` +
      `Next candidates, named not cut: the \`status\` index could leave out \`delivered\` records (1 write a record less; counting delivered records would then need the metrics); CloudWatch Logs, ${(logShare * 100).toFixed(0)} % at 1 record per request (the INFO \`delivered\` line alone is ${m.logs.deliveredRecord} B per record); ` +
      'and for 1-record requests the per-request fees (API Gateway, SendMessageBatch, Lambda), which a client sending 10 records per request divides by 10.',
  ];
  return {
    tables: [
      itemised,
      '',
      variants,
      '',
      cutTable,
      '',
      storyTable,
      '',
      fixedTable,
      '',
      ...(workerTable
        ? [
            'The worker per million records, by how it is fed (fewer, larger invocations; a batched call answers in ' +
              `${ALLOWANCE.downstreamMs} ms + ${ALLOWANCE.downstreamPerBatchedRecordMs} ms per further record it carries, stated; the calls of one invocation go one after another; ` +
              `claims, outcomes and events ${WORKER_WRITES_AT_ONCE} at once; worker CPU ${(o.workerCpuUs / 1000).toFixed(2)} ms per record for every setting):`,
            '',
            workerTable,
            '',
          ]
        : []),
      ...inputs,
      `Prices checked: ${PRICE_CHECKS.join('; ')}.`,
      '',
      ...waste,
    ].join('\n'),
    biggest: { item, usd: value, share: value / sum(one) },
    totals,
  };
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else console.log(JSON.stringify(await measureCostInputs(), null, 1));
}
