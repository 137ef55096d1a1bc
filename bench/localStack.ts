/**
 * The local stack under load: `npm start` as a person runs it, driven over HTTP, beside serverless-offline's own
 * ceiling (bench/trivialService: one function that answers 200 `{}` at once, same osls, same serverless-offline,
 * same preloads, same LOCAL_LAMBDA_CONCURRENCY, same client), for each LOCAL_LAMBDA_CONCURRENCY of a sweep.
 *
 * Per concurrency:
 * 1. a fresh `npm start` (own temporary DATA_DIR, free PORT); the moment it prints `ready:`, a cold burst of
 *    distinct requests with many in flight, sales and cases alternating;
 * 2. once the burst's records are delivered: a warm-up, then the steady intake (a fixed number of requests at a
 *    fixed concurrency), with the CPU time of every process of the stack (/proc) before and after; then the
 *    delivery of those records is waited for and its CPU counted apart;
 * 3. the trivial service, fresh, with the same warm-up and steady run.
 *
 * Linux only for the CPU split (/proc); the rates and latencies are measured anywhere.
 *
 *   node bench/localStack.ts [--concurrency 2,4,8] [--rounds 2] [--env NAME=value …]   # prints the figures as JSON
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freePorts, waitForHttp } from '../local/ports.ts';
import { killGroup } from '../local/processes.ts';
import { binDir, oslsScript } from '../local/project.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../testkit/factories/records.ts';
import { quantile } from '../testkit/quantile.ts';
import { baseEnv, benchDir, projectRoot } from './proc.ts';

export interface LocalStackSettings {
  /** LOCAL_LAMBDA_CONCURRENCY values to measure, each with a fresh `npm start` and a fresh trivial service. */
  concurrencies: number[];
  burstRequests: number;
  burstInFlight: number;
  warmupRequests: number;
  steadyRequests: number;
  steadyInFlight: number;
  /** Times the whole sweep is repeated (interleaved: 2, 4, 8, 2, 4, 8, …). */
  rounds: number;
  /** Extra environment for npm start and the trivial service alike, for diagnosis (e.g. POWERTOOLS_LOG_LEVEL). */
  env?: Record<string, string>;
}

export const defaultLocalStackSettings: LocalStackSettings = {
  concurrencies: [2, 4, 8],
  burstRequests: 200,
  burstInFlight: 100,
  warmupRequests: 200,
  steadyRequests: 2000,
  steadyInFlight: 32,
  rounds: 2,
};

/** Answers of one run of requests. */
export interface LoadFigures {
  requests: number;
  inFlight: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 200 (0: no answer at all). */
  non200: number;
  /** Count by status, e.g. `{ "200": 199, "504": 1 }`. */
  statuses: Record<string, number>;
  /** Answers 200 by kind. */
  accepted: Accepted;
}

interface Accepted {
  sales: number;
  cases: number;
}

/** CPU per request (ms) of each process while the requests ran, and what other work used meanwhile. */
export interface CpuSplit {
  /** This process: the HTTP client. */
  clientMs: number;
  /** serverless-offline, all its threads. */
  offlineMs: number;
  /** Of offlineMs: its main thread (HTTP server, routing, events, the threads' stdout). */
  offlineMainMs?: number;
  /** Of offlineMs: the handler threads (one per instance). */
  offlineHandlerThreadsMs?: number;
  /** npm start's runner (scripts/start.ts): dynalite, fauxqs, the delivery pollers and worker, the sandboxes. */
  runnerMs: number;
  /** npm and its shell. */
  npmMs: number;
  /** Cores' worth of CPU that the rest of the machine used meanwhile. */
  othersCores?: number;
  /** 1-minute load average at the start and the end. */
  loadBefore: number;
  loadAfter: number;
}

export interface SteadyFigures extends LoadFigures {
  cpu?: CpuSplit;
}

export interface DeliveryTail {
  /** Records accepted in the steady run. */
  records: number;
  /** From the last answer until SAP and Salesforce (the sandboxes) held every one; undefined if not within 120 s. */
  afterMs?: number;
  /** Runner CPU per record from the start of the steady run until then (intake's AWS calls and delivery). */
  runnerMsPerRecord?: number;
}

export interface LocalStackRun {
  concurrency: number;
  /** Spawn of `npm start` to its `ready:` line. */
  readyAfterMs: number;
  burst: LoadFigures;
  steady: SteadyFigures;
  delivery: DeliveryTail;
  ceiling: SteadyFigures;
}

export interface LocalStackResult {
  settings: LocalStackSettings;
  /** What `npm start` uses without LOCAL_LAMBDA_CONCURRENCY on this machine. */
  defaultConcurrency: number;
  runs: LocalStackRun[];
  loadBefore: number;
  loadAfter: number;
}

const host = '127.0.0.1';
const progress = (text: string) => process.stderr.write(`[bench local] ${text}\n`);

// ---- /proc: the stack's processes and their CPU time ------------------------------------------------------

const TICKS_PER_SECOND = 100;

/** utime + stime (ms) and parent pid of a /proc stat file's content. */
const parseStat = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "(comm)": state is field 3 (index 0), ppid 4, utime 14, stime 15 (1-based).
  return {
    ppid: Number(fields[1]),
    cpuMs: ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000,
  };
};

const readStat = (path: string) => {
  try {
    return parseStat(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
};

const hasProc = (() => {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
})();

/** `root` and every process below it, by pid, with their command lines. */
const processTree = (root: number): Map<number, string> => {
  if (!hasProc) return new Map([[root, '']]);
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(`/proc/${name}/stat`);
    if (stat) parents.set(Number(name), stat.ppid);
  }
  const tree = new Map<number, string>();
  const visit = (pid: number) => {
    let commandLine = '';
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {}
    tree.set(pid, commandLine);
    for (const [child, parent] of parents) if (parent === pid) visit(child);
  };
  visit(root);
  return tree;
};

interface StackPids {
  offline?: number;
  runner?: number;
  npm: number[];
}

/** npm start's processes: serverless-offline (osls), the runner (scripts/start.ts), npm and its shell. */
const stackPids = (npmPid: number): StackPids => {
  const pids: StackPids = { npm: [] };
  for (const [pid, commandLine] of processTree(npmPid)) {
    if (commandLine.includes('serverless.js')) pids.offline = pid;
    else if (commandLine.includes('scripts/start.ts')) pids.runner = pid;
    else pids.npm.push(pid);
  }
  return pids;
};

/** CPU ms of a process, split into its main thread and the rest. */
const processCpu = (pid: number | undefined) => {
  if (pid === undefined) return { total: 0, main: 0 };
  const total = readStat(`/proc/${pid}/stat`)?.cpuMs ?? 0;
  const main = readStat(`/proc/${pid}/task/${pid}/stat`)?.cpuMs ?? 0;
  return { total, main };
};

/** CPU ms of every thread of `pid` whose name says it is a Node worker thread (serverless-offline's handlers). */
const workerThreadsCpu = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  let sum = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let comm = '';
      try {
        comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      } catch {}
      if (comm === 'WorkerThread') sum += readStat(`/proc/${pid}/task/${tid}/stat`)?.cpuMs ?? 0;
    }
  } catch {}
  return sum;
};

interface CpuSnapshot {
  at: number;
  machineBusyMs: number;
  clientMs: number;
  offline: { total: number; main: number };
  offlineThreads: number;
  runnerMs: number;
  npmMs: number;
  load: number;
}

const cpuSnapshot = (pids: StackPids): CpuSnapshot => {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    machineBusyMs: cpus().reduce(
      (sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq,
      0,
    ),
    clientMs: (usage.user + usage.system) / 1000,
    offline: processCpu(pids.offline),
    offlineThreads: workerThreadsCpu(pids.offline),
    runnerMs: processCpu(pids.runner).total,
    npmMs: pids.npm.reduce((sum, pid) => sum + processCpu(pid).total, 0),
    load: loadavg()[0],
  };
};

const cpuSplit = (from: CpuSnapshot, to: CpuSnapshot, requests: number): CpuSplit | undefined => {
  if (!hasProc) return undefined;
  const clientMs = to.clientMs - from.clientMs;
  const offlineMs = to.offline.total - from.offline.total;
  const runnerMs = to.runnerMs - from.runnerMs;
  const npmMs = to.npmMs - from.npmMs;
  const others = to.machineBusyMs - from.machineBusyMs - (clientMs + offlineMs + runnerMs + npmMs);
  const threads = to.offlineThreads - from.offlineThreads;
  return {
    clientMs: clientMs / requests,
    offlineMs: offlineMs / requests,
    offlineMainMs: (to.offline.main - from.offline.main) / requests,
    offlineHandlerThreadsMs: threads > 0 ? threads / requests : undefined,
    runnerMs: runnerMs / requests,
    npmMs: npmMs / requests,
    othersCores: Math.max(0, others / (to.at - from.at)),
    loadBefore: from.load,
    loadAfter: to.load,
  };
};

// ---- the client -------------------------------------------------------------------------------------------

export interface Planned {
  path: string;
  key: string;
  body: string;
}

interface Keys {
  dealer: string;
  forms: string;
}

/** `count` distinct requests, sales (one record, unique FrameNum) and cases (distinct comments) alternating. */
const plan = (count: number, label: string, keys: Keys): Planned[] => {
  const run = `${label}${Date.now().toString(36)}`;
  return Array.from({ length: count }, (_, index) =>
    index % 2 === 0
      ? {
          path: '/erp/sales_registration',
          key: keys.dealer,
          body: JSON.stringify([salesRegistrationInput({ FrameNum: uniqueFrame(`B${index}`) })]),
        }
      : {
          path: '/crm/case',
          key: keys.forms,
          body: JSON.stringify(caseInput({ comments: `Bench ${run} request ${index}` })),
        },
  );
};

interface Answer {
  status: number;
  ms: number;
}

const post = (agent: Agent, port: number, planned: Planned): Promise<Answer> =>
  new Promise((resolve) => {
    const started = performance.now();
    const done = (status: number) => resolve({ status, ms: performance.now() - started });
    const req = request(
      {
        host,
        port,
        agent,
        method: 'POST',
        path: planned.path,
        timeout: 60_000,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(planned.body),
          'x-api-key': planned.key,
        },
      },
      (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode ?? 0));
        res.once('error', () => done(0));
      },
    );
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', () => done(0));
    req.end(planned.body);
  });

/** The p-th percentile (nearest rank); 0 for none. */
const percentile = (values: number[], p: number) => (values.length === 0 ? 0 : quantile(values, p / 100));

/** Sends every planned request with at most `inFlight` outstanding (keep-alive connections, one per slot). */
export const drive = async (port: number, planned: Planned[], inFlight: number): Promise<LoadFigures> => {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  const answers: Answer[] = new Array(planned.length);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < planned.length) {
        const index = next++;
        answers[index] = await post(agent, port, planned[index]);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const statuses: Record<string, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  const latencies = answers.map((a) => a.ms).sort((a, b) => a - b);
  const accepted = (path: string) =>
    answers.filter((a, index) => a.status === 200 && planned[index].path === path).length;
  return {
    requests: planned.length,
    inFlight,
    seconds,
    perSecond: planned.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    non200: answers.filter((a) => a.status !== 200).length,
    statuses,
    accepted: { sales: accepted('/erp/sales_registration'), cases: accepted('/crm/case') },
  };
};

/** Warm-up, then the measured run with the CPU of `pids()` (re-read: instances start threads, not processes). */
const steadyRun = async (
  port: number,
  keys: Keys,
  settings: LocalStackSettings,
  pids: () => StackPids,
): Promise<SteadyFigures> => {
  await drive(port, plan(settings.warmupRequests, 'W', keys), settings.steadyInFlight);
  return measuredRun(port, plan(settings.steadyRequests, 'S', keys), settings.steadyInFlight, pids());
};

const measuredRun = async (
  port: number,
  planned: Planned[],
  inFlight: number,
  pids: StackPids,
): Promise<SteadyFigures> => {
  const before = cpuSnapshot(pids);
  const figures = await drive(port, planned, inFlight);
  return { ...figures, cpu: cpuSplit(before, cpuSnapshot(pids), planned.length) };
};

// ---- npm start --------------------------------------------------------------------------------------------

interface NpmStart {
  port: number;
  keys: Keys;
  readyAfterMs: number;
  pids(): StackPids;
  /** Records the sandboxes hold: SAP registrations, Salesforce cases. */
  delivered(): Promise<{ sales: number; cases: number }>;
  stop(): Promise<void>;
}

/** The environment a person's shell would give npm start: nothing of ours (AWS_*, settings, NODE_OPTIONS). */
const personEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(baseEnv()).filter(
      ([name]) =>
        !/^(AWS_|SALES_|CASE_|RECORDS_|ERP_|CRM_|API_KEYS_|DELIVERY_|POWERTOOLS_|LOCAL_|DEBUG$|PORT$|DATA_DIR$)/.test(
          name,
        ),
    ),
  );

const outputLimit = 64 * 1024;

const keepOutput = (child: ChildProcess) => {
  let output = '';
  const collect = (chunk: string) => {
    output = (output + chunk).slice(-outputLimit);
  };
  child.stdout?.setEncoding('utf8').on('data', collect);
  child.stderr?.setEncoding('utf8').on('data', collect);
  return () => output;
};

/** Waits for every pid to be gone (true), up to `ms`. */
const gone = async (pids: number[], ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        // A zombie (exited, not yet reaped by its parent) holds nothing any more.
        return !hasProc || readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    });
    if (alive.length === 0) return true;
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
};

export const startNpm = async (
  concurrency: number,
  dataDir: string,
  extraEnv: Record<string, string> = {},
  root = projectRoot,
): Promise<NpmStart> => {
  const [port] = await freePorts(1);
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: {
      ...personEnv(),
      DATA_DIR: dataDir,
      PORT: String(port),
      LOCAL_LAMBDA_CONCURRENCY: String(concurrency),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, as a terminal gives it
  });
  const output = keepOutput(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start not ready in 90 s:\n${output()}`)), 90_000);
    const check = () => {
      if (/^ready: http:\/\/localhost:\d+$/m.test(output())) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    exited.then(() => reject(new Error(`npm start exited:\n${output()}`)));
  });
  const readyAfterMs = performance.now() - started;
  const all = JSON.parse(readFileSync(join(dataDir, 'api-keys.json'), 'utf8')) as Record<string, string>;
  const sapUrl = /SAP sandbox: (http:\/\/\S+)/.exec(output())?.[1];
  const salesforceUrl = /Salesforce sandbox: (http:\/\/\S+)/.exec(output())?.[1];
  const listed = async (url: string | undefined, path: string) => {
    if (!url) return Number.NaN;
    const response = await fetch(`${url}${path}`);
    return ((await response.json()) as unknown[]).length;
  };
  const npmPid = child.pid as number;
  let pids = stackPids(npmPid);
  return {
    port,
    keys: { dealer: all['example-dealer'], forms: all['example-web-forms'] },
    readyAfterMs,
    pids: () => {
      pids = stackPids(npmPid);
      return pids;
    },
    delivered: async () => ({
      sales: await listed(sapUrl, '/_sandbox/registrations'),
      cases: await listed(salesforceUrl, '/_sandbox/cases'),
    }),
    stop: async () => {
      const known = [npmPid, ...pids.npm, pids.runner, pids.offline].filter((pid) => pid !== undefined);
      killGroup(npmPid, 'SIGTERM');
      await exited;
      if (!(await gone(known, 20_000))) {
        progress(`npm start (pid ${npmPid}) still runs 20 s after SIGTERM: SIGKILL`);
        killGroup(npmPid, 'SIGKILL');
        if (pids.offline) killGroup(pids.offline, 'SIGKILL');
        await gone(known, 5_000);
      }
    },
  };
};

/** Polls the sandboxes until they hold `sales` and `cases` records; the ms it took, or undefined after `ms`. */
const waitDelivered = async (
  stack: NpmStart,
  want: { sales: number; cases: number },
  ms: number,
): Promise<number | undefined> => {
  const started = performance.now();
  while (performance.now() - started < ms) {
    const have = await stack.delivered();
    if (have.sales >= want.sales && have.cases >= want.cases) return performance.now() - started;
    await sleep(500);
  }
  return undefined;
};

// ---- the trivial service (serverless-offline's ceiling) ---------------------------------------------------

const preload = (name: string) => new URL(`../local/${name}`, import.meta.url).href;

/** serverless-offline serving bench/trivialService, launched as local/offline.ts launches ours. */
const startTrivial = async (concurrency: number, extraEnv: Record<string, string> = {}) => {
  const [port, lambdaPort, websocketPort] = await freePorts(3);
  const env = {
    ...personEnv(),
    PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}`,
    PORT: String(port),
    OFFLINE_LAMBDA_PORT: String(lambdaPort),
    OFFLINE_WEBSOCKET_PORT: String(websocketPort),
    LOCAL_LAMBDA_CONCURRENCY: String(concurrency),
    ...extraEnv,
  };
  const child = spawn(
    process.execPath,
    [
      '--import',
      preload('orphanGuard.ts'),
      '--import',
      preload('warmPool.ts'),
      oslsScript,
      'offline',
      'start',
      '--stage',
      'local',
    ],
    { cwd: join(benchDir, 'trivialService'), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const output = keepOutput(child);
  const pid = child.pid as number;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const early = new AbortController();
  exited.then(() => early.abort(new Error(`the trivial service exited:\n${output()}`)));
  await waitForHttp(`http://${host}:${port}/crm/case`, 60_000, early.signal);
  return {
    port,
    pids: (): StackPids => ({ offline: pid, npm: [] }),
    stop: async () => {
      killGroup(pid, 'SIGTERM');
      if (!(await gone([pid], 10_000))) killGroup(pid, 'SIGKILL');
      await exited;
    },
  };
};

// ---- the whole measurement --------------------------------------------------------------------------------

const measureOurs = async (
  concurrency: number,
  settings: LocalStackSettings,
): Promise<Omit<LocalStackRun, 'ceiling'>> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-bench-'));
  let stack: NpmStart | undefined;
  try {
    stack = await startNpm(concurrency, dataDir, settings.env);
    const { port, keys } = stack;
    const burst = await drive(port, plan(settings.burstRequests, 'C', keys), settings.burstInFlight);
    // What the sandboxes must hold: every record answered 200 (one answered 504 may arrive too, hence ≥).
    const add = (a: Accepted, b: Accepted): Accepted => ({
      sales: a.sales + b.sales,
      cases: a.cases + b.cases,
    });
    let expected = burst.accepted;
    await waitDelivered(stack, expected, 60_000);
    const warmup = await drive(port, plan(settings.warmupRequests, 'W', keys), settings.steadyInFlight);
    expected = add(expected, warmup.accepted);
    await waitDelivered(stack, expected, 60_000);
    const pids = stack.pids();
    const before = cpuSnapshot(pids);
    const steady = await measuredRun(
      port,
      plan(settings.steadyRequests, 'S', keys),
      settings.steadyInFlight,
      pids,
    );
    expected = add(expected, steady.accepted);
    const afterMs = await waitDelivered(stack, expected, 120_000);
    const after = cpuSnapshot(pids);
    const records = steady.accepted.sales + steady.accepted.cases;
    return {
      concurrency,
      readyAfterMs: stack.readyAfterMs,
      burst,
      steady,
      delivery: {
        records,
        afterMs,
        runnerMsPerRecord:
          hasProc && afterMs !== undefined ? (after.runnerMs - before.runnerMs) / records : undefined,
      },
    };
  } finally {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
};

const measureCeiling = async (concurrency: number, settings: LocalStackSettings): Promise<SteadyFigures> => {
  const trivial = await startTrivial(concurrency, settings.env);
  try {
    return await steadyRun(trivial.port, { dealer: 'bench', forms: 'bench' }, settings, trivial.pids);
  } finally {
    await trivial.stop();
  }
};

/**
 * Every concurrency of the sweep: npm start (cold burst, steady intake), then the trivial service (steady).
 *
 * @example
 * const { runs } = await measureLocalStack({ ...defaultLocalStackSettings, concurrencies: [4] });
 */
export const measureLocalStack = async (
  settings: LocalStackSettings = defaultLocalStackSettings,
): Promise<LocalStackResult> => {
  // What npm start uses when LOCAL_LAMBDA_CONCURRENCY is unset (local/warmPool.ts, concurrencyFrom).
  // Imported with its patch of serverless-offline off: this process runs no offline.
  process.env.LOCAL_STACK_WARM_POOL = 'off';
  const { defaultConcurrency } = await import('../local/warmPool.ts');
  delete process.env.LOCAL_STACK_WARM_POOL;
  const loadBefore = loadavg()[0];
  const runs: LocalStackRun[] = [];
  const sweep = Array.from({ length: settings.rounds }, () => settings.concurrencies).flat();
  for (const concurrency of sweep) {
    progress(`LOCAL_LAMBDA_CONCURRENCY=${concurrency}: npm start, cold burst, steady intake…`);
    const ours = await measureOurs(concurrency, settings);
    progress(`LOCAL_LAMBDA_CONCURRENCY=${concurrency}: trivial service (serverless-offline's ceiling)…`);
    const ceiling = await measureCeiling(concurrency, settings);
    runs.push({ ...ours, ceiling });
    progress(
      `LOCAL_LAMBDA_CONCURRENCY=${concurrency}: burst ${ours.burst.perSecond.toFixed(0)}/s (${ours.burst.non200} not 200), ` +
        `steady ${ours.steady.perSecond.toFixed(0)}/s, ceiling ${ceiling.perSecond.toFixed(0)}/s`,
    );
  }
  return {
    settings,
    defaultConcurrency: Math.max(defaultConcurrency, availableParallelism()),
    runs,
    loadBefore,
    loadAfter: loadavg()[0],
  };
};

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      env: { type: 'string', multiple: true, default: [] },
    },
  });
  const env = Object.fromEntries(
    values.env.map((pair) => [pair.split('=')[0], pair.split('=').slice(1).join('=')]),
  );
  const concurrencies = values.concurrency?.split(',').map(Number) ?? defaultLocalStackSettings.concurrencies;
  const rounds = Number(values.rounds ?? defaultLocalStackSettings.rounds);
  const result = await measureLocalStack({ ...defaultLocalStackSettings, concurrencies, rounds, env });
  console.log(JSON.stringify(result, null, 2));
}
