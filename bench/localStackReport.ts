/** The local-stack figures (bench/localStack.ts) as rows of the main table, detail tables and notes. */
import { cpus } from 'node:os';
import type { CpuSplit, LocalStackResult, LocalStackRun, SteadyFigures } from './localStack.ts';
import { median } from './proc.ts';
import { markdownTable, type ResultRow, ratio, yesNo } from './table.ts';

export interface LocalStackReport {
  /** Rows for the main table: the concurrency npm start uses by default. */
  rows: ResultRow[];
  /** Markdown: the sweep (rates, latencies) and the CPU split per request. */
  detail: string;
  notes: string[];
}

const perSecond = (value: number) => `${value.toFixed(0)}/s`;
const latency = (value: number) =>
  value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`;
const cpuMs = (value: number | undefined) => (value === undefined ? '?' : value.toFixed(2));

/** CPU ms per request of every process serving the requests (client included). */
const totalCpu = (cpu: CpuSplit) => cpu.clientMs + cpu.offlineMs + cpu.runnerMs + cpu.npmMs;

const steadyRatio = (run: LocalStackRun) => run.steady.perSecond / run.ceiling.perSecond;

/** Median over the rounds of one concurrency, by the figure that matters. */
const medianRun = (runs: LocalStackRun[], figure: (run: LocalStackRun) => number): LocalStackRun => {
  const sorted = [...runs].sort((a, b) => figure(a) - figure(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

/**
 * @example
 * const report = localStackReport(await measureLocalStack(), 0.8);
 */
export const localStackReport = (result: LocalStackResult, targetRatio: number): LocalStackReport => {
  const { settings } = result;
  const byConcurrency = new Map<number, LocalStackRun[]>();
  for (const run of result.runs)
    byConcurrency.set(run.concurrency, [...(byConcurrency.get(run.concurrency) ?? []), run]);
  const rounds = settings.rounds > 1 ? ` (median of ${settings.rounds} rounds)` : '';

  const rows: ResultRow[] = [];
  const defaults = byConcurrency.get(result.defaultConcurrency);
  if (defaults) {
    const burst = medianRun(defaults, (run) => run.burst.perSecond);
    const steady = medianRun(defaults, steadyRatio);
    const failed = Math.max(...defaults.map((run) => run.burst.non200));
    rows.push({
      benchmark:
        `local: cold burst through npm start at \`ready:\` (${settings.burstRequests} distinct requests, ${settings.burstInFlight} in flight, ` +
        `sales and cases; LOCAL_LAMBDA_CONCURRENCY ${result.defaultConcurrency}, the default)${rounds}`,
      ours: `${perSecond(burst.burst.perSecond)}; p50 ${latency(burst.burst.p50Ms)}, p99 ${latency(burst.burst.p99Ms)}; ${burst.burst.non200} not 200`,
      baseline: '—',
      ratio: '—',
      target: 'every answer 200',
      met: yesNo(failed === 0),
    });
    const r = steadyRatio(steady);
    rows.push({
      benchmark:
        `local: steady intake through npm start (${settings.steadyRequests} requests, ${settings.steadyInFlight} in flight, after ` +
        `${settings.warmupRequests} warm-up; LOCAL_LAMBDA_CONCURRENCY ${result.defaultConcurrency})${rounds}`,
      ours: `${perSecond(steady.steady.perSecond)} (p50 ${latency(steady.steady.p50Ms)})`,
      baseline: `${perSecond(steady.ceiling.perSecond)} (serverless-offline, handler answering 200 at once)`,
      ratio: ratio(r),
      target: `≥ ${targetRatio.toFixed(2)}x`,
      met: yesNo(r >= targetRatio),
    });
  }

  const label = (run: LocalStackRun, index: number) =>
    settings.rounds > 1
      ? `${run.concurrency} (round ${Math.floor(index / settings.concurrencies.length) + 1})`
      : String(run.concurrency);
  const sweep = markdownTable(
    [
      'LOCAL_LAMBDA_CONCURRENCY',
      'ready after',
      'cold burst: req/s',
      'p50',
      'p99',
      'not 200',
      'steady: req/s',
      'p50',
      'p99',
      'not 200',
      'ceiling: req/s',
      'p50',
      'p99',
      'ratio',
    ],
    result.runs.map((run, index) => [
      label(run, index),
      latency(run.readyAfterMs),
      perSecond(run.burst.perSecond),
      latency(run.burst.p50Ms),
      latency(run.burst.p99Ms),
      statusText(run.burst),
      perSecond(run.steady.perSecond),
      latency(run.steady.p50Ms),
      latency(run.steady.p99Ms),
      statusText(run.steady),
      perSecond(run.ceiling.perSecond),
      latency(run.ceiling.p50Ms),
      latency(run.ceiling.p99Ms),
      ratio(steadyRatio(run)),
    ]),
  );

  const withCpu = result.runs.filter((run) => run.steady.cpu && run.ceiling.cpu);
  const cpuTable = withCpu.length
    ? markdownTable(
        [
          'LOCAL_LAMBDA_CONCURRENCY',
          'ours: client',
          'offline (main thread; handler threads)',
          'runner',
          'total',
          'ceiling: client',
          'offline (main thread; handler threads)',
          'total',
          'ceiling total / ours total',
          'other work (cores)',
          'load (1 min) before → after',
          'delivery done after the last answer; runner per record, intake + delivery',
        ],
        withCpu.map((run) => {
          const ours = run.steady.cpu as CpuSplit;
          const ceiling = run.ceiling.cpu as CpuSplit;
          return [
            label(run, result.runs.indexOf(run)),
            cpuMs(ours.clientMs),
            `${cpuMs(ours.offlineMs)} (${cpuMs(ours.offlineMainMs)}; ${cpuMs(ours.offlineHandlerThreadsMs)})`,
            cpuMs(ours.runnerMs + ours.npmMs),
            cpuMs(totalCpu(ours)),
            cpuMs(ceiling.clientMs),
            `${cpuMs(ceiling.offlineMs)} (${cpuMs(ceiling.offlineMainMs)}; ${cpuMs(ceiling.offlineHandlerThreadsMs)})`,
            cpuMs(totalCpu(ceiling)),
            ratio(totalCpu(ceiling) / totalCpu(ours)),
            `${(ours.othersCores ?? 0).toFixed(2)}; ${(ceiling.othersCores ?? 0).toFixed(2)}`,
            `${ours.loadBefore.toFixed(1)} → ${ceiling.loadAfter.toFixed(1)}`,
            run.delivery.afterMs === undefined
              ? 'not within 120 s'
              : `${latency(run.delivery.afterMs)}; ${cpuMs(run.delivery.runnerMsPerRecord)} ms`,
          ];
        }),
      )
    : 'CPU split: unknown (no /proc).';

  const notes: string[] = [];
  const medians = [...byConcurrency.entries()].map(([concurrency, runs]) => ({
    concurrency,
    burst: median(runs.map((run) => run.burst.perSecond)),
    burstFailed: Math.max(...runs.map((run) => run.burst.non200)),
    steady: median(runs.map((run) => run.steady.perSecond)),
  }));
  const clean = medians.filter((m) => m.burstFailed === 0);
  const bestSteady = [...medians].sort((a, b) => b.steady - a.steady)[0];
  const bestBurst = [...(clean.length ? clean : medians)].sort((a, b) => b.burst - a.burst)[0];
  if (bestSteady && bestBurst) {
    notes.push(
      `Sweep: the most steady intake at LOCAL_LAMBDA_CONCURRENCY ${bestSteady.concurrency} ` +
        `(${medians.map((m) => `${m.concurrency}: ${perSecond(m.steady)}`).join(', ')}); the fastest cold burst ` +
        `${clean.length ? 'with every answer 200 ' : ''}at ${bestBurst.concurrency} ` +
        `(${medians.map((m) => `${m.concurrency}: ${perSecond(m.burst)}${m.burstFailed ? `, ${m.burstFailed} not 200` : ''}`).join('; ')}). ` +
        `npm start uses ${result.defaultConcurrency} when LOCAL_LAMBDA_CONCURRENCY is unset.`,
    );
  }
  notes.push(
    `Load average (1 min): ${result.loadBefore.toFixed(2)} before the local-stack runs, ${result.loadAfter.toFixed(2)} ` +
      `after (${cpus().length} cores: above ${cpus().length} processes were waiting for CPU).`,
  );

  const detail = [
    `Rates and latencies (${settings.burstRequests}-request cold burst with ${settings.burstInFlight} in flight; ` +
      `steady: ${settings.steadyRequests} requests with ${settings.steadyInFlight} in flight after ${settings.warmupRequests} warm-up; ` +
      'ratio = steady / ceiling):',
    '',
    sweep,
    '',
    'CPU ms per request in the steady runs (/proc utime + stime of each process before and after; "runner" is ' +
      "npm start's own process: dynalite, fauxqs, the delivery pollers and worker, the sandboxes; other work in " +
      "cores' worth for ours; ceiling):",
    '',
    cpuTable,
  ].join('\n');

  return { rows, detail, notes };
};

const statusText = (figures: SteadyFigures) =>
  figures.non200 === 0
    ? '0'
    : `${figures.non200} (${Object.entries(figures.statuses)
        .filter(([status]) => status !== '200')
        .map(([status, n]) => `${n}× ${status === '0' ? 'no answer' : status}`)
        .join(', ')})`;
