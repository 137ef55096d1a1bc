/**
 * Warm intake cost: CPU time per request of the intake handlers (functions/*.ts as they are) in the process
 * that runs them, against the instant AWS endpoint in another process, beside the floor (bench/intakeFloor.ts)
 * measured in the same process with the same clients; and the AWS calls each request makes.
 *
 * `measureIntakeCost()` starts the endpoint and runs `node bench/intakeCost.ts --child` with the handlers'
 * settings pointing at it; the child prints its figures as JSON.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { formPost, jsonPost, lambdaContext } from '../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput } from '../testkit/factories/records.ts';
import { type CallCounts, countsBetween, readCounts, startInstantAws } from './instantAws.ts';
import { awsFreeEnv, benchDir, median, quietPowertools, runNodeJson } from './proc.ts';
import { cpuProfiler } from './profile.ts';

export interface IntakeRow {
  name: string;
  records: number;
  requests: number;
  /**
   * CPU (user + system) per request, microseconds: the median over the blocks (a block now and then disturbed by
   * other work on the machine, or holding a major GC, does not move it).
   */
  oursCpuUs: number;
  floorCpuUs: number;
  /** CPU per request of ours with the logger at INFO (measured alongside, when asked for). */
  oursLoggingCpuUs?: number;
  /** CPU per request of each block, by side, in the order measured: the spread shows the noise. */
  cpuUsPerBlock: Record<string, number[]>;
  /** Wall time per request, ms (sequential requests, instant AWS). */
  oursWallMs: number;
  floorWallMs: number;
  /** Calls (and request bytes) per request, by operation. */
  oursCalls: CallCounts;
  floorCalls: CallCounts;
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

interface Scenario {
  name: string;
  records: number;
  event: (n: number) => APIGatewayProxyEvent;
  ours: Handler;
  floor: Handler;
  warmup: number;
  rounds: number;
  perBlock: number;
}

/** Unique content per request: every record is new (ids are content hashes). */
const runTag = Date.now().toString(36).slice(-5).toUpperCase();
let serial = 0;
const uniqueFrame = () => `BENCH${runTag}${(serial++).toString(36).toUpperCase().padStart(8, '0')}`;
const uniqueEmail = () => `bench.${runTag.toLowerCase()}.${(serial++).toString(36)}@example.com`;

const salesEvent = (records: number) => () =>
  jsonPost(
    '/erp/sales_registration',
    Array.from({ length: records }, () =>
      salesRegistrationInput({ FrameNum: uniqueFrame(), email: uniqueEmail() }),
    ),
  );

const caseJsonEvent = () => jsonPost('/crm/case', caseInput({ email: uniqueEmail() }));

const caseFormEvent = () => {
  const fields = Object.fromEntries(
    Object.entries(caseInput({ email: uniqueEmail(), privacyConsent: 'on' })).map(([k, v]) => [k, String(v)]),
  );
  return formPost('/crm/case', fields);
};

interface BlockResult {
  cpuUs: number;
  wallMs: number;
  calls: CallCounts;
}

const addCounts = (into: CallCounts, more: CallCounts) => {
  for (const [key, value] of Object.entries(more)) {
    const entry = into[key] ?? { calls: 0, bytes: 0 };
    entry.calls += value.calls;
    entry.bytes += value.bytes;
    into[key] = entry;
  }
};

const perRequest = (counts: CallCounts, requests: number): CallCounts =>
  Object.fromEntries(
    Object.entries(counts).map(([key, value]) => [
      key,
      { calls: value.calls / requests, bytes: value.bytes / requests },
    ]),
  );

const runBlock = async (
  handler: Handler,
  events: APIGatewayProxyEvent[],
  endpoint: string,
  profiler?: Awaited<ReturnType<typeof cpuProfiler>>,
) => {
  const contexts = events.map(() => lambdaContext());
  const before = await readCounts(endpoint);
  // Each block starts from a collected heap, so it pays for its own garbage, not for the previous block's.
  (globalThis as { gc?: () => void }).gc?.();
  await profiler?.start();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < events.length; i++) {
    const response = await handler(events[i], contexts[i]);
    if (response.statusCode !== 200) throw new Error(`answer ${response.statusCode}: ${response.body}`);
  }
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await profiler?.pause();
  const calls = countsBetween(before, await readCounts(endpoint));
  return { cpuUs: used.user + used.system, wallMs, calls } satisfies BlockResult;
};

type Side = 'ours' | 'floor' | 'oursLogging';

const runScenario = async (
  scenario: Scenario,
  endpoint: string,
  logging: boolean,
  profiler?: Awaited<ReturnType<typeof cpuProfiler>>,
): Promise<IntakeRow> => {
  const { logger } = await import('../lib/observability/logger.ts');
  const quietLevel = logger.getLevelName();
  const handlers: Record<Side, Handler> = {
    ours: scenario.ours,
    floor: scenario.floor,
    // The same handler with the service's logger at INFO for the block (one JSON line per accepted request).
    oursLogging: async (event, context) => {
      logger.setLogLevel('INFO');
      try {
        return await scenario.ours(event, context);
      } finally {
        logger.setLogLevel(quietLevel);
      }
    },
  };
  const sides: Side[] = logging ? ['ours', 'floor', 'oursLogging'] : ['ours', 'floor'];
  const make = (count: number) => Array.from({ length: count }, (_, i) => scenario.event(i));
  for (const side of sides) await runBlock(handlers[side], make(scenario.warmup), endpoint);
  const empty = (): BlockResult => ({ cpuUs: 0, wallMs: 0, calls: {} });
  const total: Record<Side, BlockResult> = { ours: empty(), floor: empty(), oursLogging: empty() };
  const blocks: Record<Side, number[]> = { ours: [], floor: [], oursLogging: [] };
  for (let round = 0; round < scenario.rounds; round++) {
    // Alternate the order, so that no side always runs right after the same other side's garbage.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const events = make(scenario.perBlock);
      const block = await runBlock(
        handlers[side],
        events,
        endpoint,
        profiler?.side === side ? profiler : undefined,
      );
      total[side].cpuUs += block.cpuUs;
      blocks[side].push(block.cpuUs / scenario.perBlock);
      total[side].wallMs += block.wallMs;
      addCounts(total[side].calls, block.calls);
    }
  }
  const requests = scenario.rounds * scenario.perBlock;
  return {
    name: scenario.name,
    records: scenario.records,
    requests,
    oursCpuUs: median(blocks.ours),
    floorCpuUs: median(blocks.floor),
    ...(logging ? { oursLoggingCpuUs: median(blocks.oursLogging) } : {}),
    cpuUsPerBlock: blocks,
    oursWallMs: total.ours.wallMs / requests,
    floorWallMs: total.floor.wallMs / requests,
    oursCalls: perRequest(total.ours.calls, requests),
    floorCalls: perRequest(total.floor.calls, requests),
  };
};

/** CPU of one INFO line of the service logger (the one an accepted request writes), to this process's stdout. */
const logLineCpuUs = async (lines = 3000): Promise<number> => {
  const { logger } = await import('../lib/observability/logger.ts');
  const quietLevel = logger.getLevelName();
  logger.setLogLevel('INFO');
  try {
    const cpu = process.cpuUsage();
    for (let i = 0; i < lines; i++) {
      logger.info('sales registrations accepted', { requestId: crypto.randomUUID(), count: 1 });
    }
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / lines;
  } finally {
    logger.setLogLevel(quietLevel);
  }
};

export interface IntakeResult {
  rows: IntakeRow[];
  /** CPU of one INFO log line, µs (when logging was asked for). */
  logLineCpuUs?: number;
}

/** The child: handlers and floor in this process, the endpoint in env. */
const child = async (logging: string[]): Promise<IntakeResult> => {
  const endpoint = process.env.AWS_ENDPOINT_URL_SQS as string;
  // The clients' keys as npm start and the tests keep them locally (API_KEYS_FILE, read once per 5 minutes).
  const { useTestKeys } = await import('../testkit/apiKeys.ts');
  useTestKeys();
  const { handler: salesHandler } = await import('../functions/salesRegistration.ts');
  const { handler: caseHandler } = await import('../functions/crmCase.ts');
  const { floorCase, floorSales } = await import('./intakeFloor.ts');
  const scenarios: Scenario[] = [
    {
      name: 'sales 1 record (JSON)',
      records: 1,
      event: salesEvent(1),
      ours: salesHandler,
      floor: floorSales,
      warmup: 300,
      rounds: 12,
      perBlock: 125,
    },
    {
      name: 'sales 500 records (JSON)',
      records: 500,
      event: salesEvent(500),
      ours: salesHandler,
      floor: floorSales,
      warmup: 4,
      rounds: 12,
      perBlock: 4,
    },
    {
      name: 'case (JSON)',
      records: 1,
      event: caseJsonEvent,
      ours: caseHandler,
      floor: floorCase,
      warmup: 300,
      rounds: 12,
      perBlock: 125,
    },
    {
      name: 'case (form)',
      records: 1,
      event: caseFormEvent,
      ours: caseHandler,
      floor: floorCase,
      warmup: 300,
      rounds: 12,
      perBlock: 125,
    },
  ];
  const rows: IntakeRow[] = [];
  for (const scenario of scenarios) {
    // BENCH_PROFILE=<side>:<file> with BENCH_PROFILE_SCENARIO=<name>: CPU profiles of that side's blocks.
    const profiler = process.env.BENCH_PROFILE_SCENARIO === scenario.name ? await cpuProfiler() : undefined;
    rows.push(await runScenario(scenario, endpoint, logging.includes(scenario.name), profiler));
    await profiler?.save();
  }
  return {
    rows,
    ...(logging.length ? { logLineCpuUs: await logLineCpuUs() } : {}),
  };
};

export interface IntakeOptions {
  /**
   * Scenarios in which a third side runs too: the same handler with the logger at INFO (POWERTOOLS_LOG_LEVEL
   * is ERROR otherwise: logging is not what the target measures), to tell what logging costs.
   */
  logging?: string[];
}

/** Starts the instant AWS endpoint in its own process and runs the handlers in another. */
export const measureIntakeCost = async (options: IntakeOptions = {}): Promise<IntakeResult> => {
  const aws = await startInstantAws();
  try {
    const endpoint = aws.info.endpoint;
    return await runNodeJson<IntakeResult>(
      ['--expose-gc', `${benchDir}/intakeCost.ts`, '--child', ...(options.logging ?? [])],
      {
        ...awsFreeEnv(),
        ...quietPowertools,
        AWS_ENDPOINT_URL_SQS: endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: endpoint,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'bench',
        AWS_SECRET_ACCESS_KEY: 'bench',
        SALES_REGISTRATION_QUEUE_URL: `${endpoint}/000000000000/sales-registrations`,
        CASE_QUEUE_URL: `${endpoint}/000000000000/cases`,
        RECORDS_TABLE: 'records',
      },
    );
  } finally {
    await aws.stop();
  }
};

if (import.meta.main) {
  if (process.argv[2] === '--child') {
    const result = await child(process.argv.slice(3));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    console.log(JSON.stringify(await measureIntakeCost(), null, 1));
  }
}
