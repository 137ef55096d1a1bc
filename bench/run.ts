/**
 * `npm run bench` (`node bench/run.ts`): every benchmark, each figure beside a baseline measured in the same
 * run, printed as one table and written to bench/RESULTS.md. Figures, never assertions: nothing here fails
 * because a target is missed.
 *
 *   node bench/run.ts [--samples 11] [--records 500] [--no-log-cost] [--local-concurrency 2,4,8] [--local-rounds 2]
 *   node bench/run.ts local [--local-concurrency …] [--local-rounds …]   # the local stack (npm start) only
 *   node bench/run.ts cost       # the AWS cost per million records (bench/costModel.ts; measures intake first)
 *   node bench/run.ts capacity   # delivery capacity on paper and by simulation (bench/capacity.ts)
 *   node bench/run.ts batched    # batched delivery: calls per record, lone-record latency (bench/batchedDelivery.ts)
 *   node bench/run.ts outage [--outage-records 1000,10000]   # drain after an outage (bench/outageDrain.ts)
 *   node bench/run.ts fair [--fair-records 10000,100000]     # fair share between clients (bench/fairShare.ts)
 *   node bench/run.ts cold [--samples 11] [--cold-label <what>]   # cold start alone (bench/coldStart.ts)
 *   node bench/run.ts console [--console-records 100000]   # the console's search on npm start (bench/consoleSearch.ts)
 *   node bench/run.ts intake [--intake-requests 250] [--intake-rounds 2]   # local intake against the previous release
 *
 * Progress goes to stderr, the tables to stdout. A whole run writes bench/RESULTS.md; `cost` and `capacity` alone
 * replace only their own section of it, as do `batched`, `outage`, `fair` and `intake`; `cold` writes a section per label
 * (`--cold-label`), so that a change's cold start before and after stand side by side.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stop as stopEsbuild } from 'esbuild';
import { measureBatchedDelivery } from './batchedDelivery.ts';
import { batchedReport } from './batchedReport.ts';
import { type CapacityResult, capacityReport, measureCapacity } from './capacity.ts';
import { measureColdStart } from './coldStart.ts';
import { measureConsoleSearch } from './consoleSearch.ts';
import { consoleSearchReport, consoleSearchTitle } from './consoleSearchReport.ts';
import {
  ALLOWANCE,
  batchedWorker,
  costReport,
  deployedFrameIndex,
  deployedMemory,
  deployedWorker,
  type Measured,
  measureCostInputs,
  ONE_CALL_PER_RECORD,
  type WorkerSetting,
} from './costModel.ts';
import { fairReport } from './fairReport.ts';
import { measureFairShare } from './fairShare.ts';
import type { CallCounts } from './instantAws.ts';
import { measureIntakeCost } from './intakeCost.ts';
import { defaultLocalStackSettings, measureLocalStack } from './localStack.ts';
import { localStackReport } from './localStackReport.ts';
import { othersCores, snapshot } from './machine.ts';
import { measureOutageDrain } from './outageDrain.ts';
import { outageReport } from './outageReport.ts';
import { benchDir } from './proc.ts';
import { defaultReleaseIntakeSettings, measureReleaseIntake, releaseIntakeReport } from './releaseIntake.ts';
import {
  bytes,
  count,
  kib,
  markdownTable,
  ms,
  type ResultRow,
  ratio,
  resultTable,
  standardError,
  us,
  yesNo,
} from './table.ts';
import { measureWorkerThroughput, type WorkerSide } from './workerThroughput.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    samples: { type: 'string', default: '11' },
    records: { type: 'string', default: '500' },
    'no-log-cost': { type: 'boolean', default: false },
    'local-concurrency': { type: 'string', default: defaultLocalStackSettings.concurrencies.join(',') },
    'local-rounds': { type: 'string', default: String(defaultLocalStackSettings.rounds) },
    'outage-records': { type: 'string', default: '1000,10000' },
    // 100,000 takes about half an hour per poller on a 2-core machine: an option, not the default.
    'fair-records': { type: 'string', default: '10000' },
    // What a `cold` run measures (e.g. the change it comes before or after): its section's title.
    'cold-label': { type: 'string', default: 'latest' },
    'console-records': { type: 'string', default: '100000' },
    'intake-requests': { type: 'string', default: String(defaultReleaseIntakeSettings.requests) },
    'intake-rounds': { type: 'string', default: String(defaultReleaseIntakeSettings.rounds) },
  },
});
const samples = Number(args.samples);
const records = Number(args.records);
const parts = ['local', 'cost', 'capacity', 'batched', 'outage', 'fair', 'cold', 'console', 'intake'];
if (positionals.some((p) => !parts.includes(p)) || positionals.length > 1)
  throw new Error(`unknown argument: ${positionals.join(' ')} (one of ${parts.join(', ')}, or none)`);
const localOnly = positionals.includes('local');
const costOnly = positionals.includes('cost');
const capacityOnly = positionals.includes('capacity');
const batchedOnly = positionals.includes('batched');
const outageOnly = positionals.includes('outage');
const outageSizes = args['outage-records'].split(',').map(Number);
const fairOnly = positionals.includes('fair');
const coldOnly = positionals.includes('cold');
const consoleOnly = positionals.includes('console');
const consoleRecords = Number(args['console-records']);
const fairSizes = args['fair-records'].split(',').map(Number);
const intakeOnly = positionals.includes('intake');
const intakeSettings = {
  ...defaultReleaseIntakeSettings,
  requests: Number(args['intake-requests']),
  rounds: Number(args['intake-rounds']),
};
const localSettings = {
  ...defaultLocalStackSettings,
  concurrencies: args['local-concurrency'].split(',').map(Number),
  rounds: Number(args['local-rounds']),
};

const TARGET = {
  coldStartRatio: 0.4,
  cpuRatio: 1.25,
  callsOneRecord: 2,
  callsPerRecordLarge: 0.15,
  workerRatio: 0.7,
  localSteadyRatio: 0.8,
};

const started = performance.now();
const progress = (text: string) =>
  process.stderr.write(
    `[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${text}\n`,
  );

// ---- measure ----------------------------------------------------------------------------------------------

/** Each phase, with how much CPU other work on the machine used meanwhile (cores' worth). */
const phases: { name: string; others?: number }[] = [];
const phase = async <T>(name: string, text: string, measure: () => Promise<T>): Promise<T> => {
  progress(text);
  const before = snapshot();
  const result = await measure();
  // esbuild's service is a child process of ours: end it, so that its CPU counts as ours, not as other work.
  await stopEsbuild();
  await new Promise((resolve) => setTimeout(resolve, 300)); // it is reaped just after stop() resolves
  phases.push({ name, others: othersCores(before, snapshot()) });
  return result;
};

const loadBefore = loadavg();
if (localOnly) {
  progress(`local stack only: LOCAL_LAMBDA_CONCURRENCY ${localSettings.concurrencies.join(', ')}…`);
  const before = snapshot();
  const local = await measureLocalStack(localSettings);
  const report = localStackReport(local, TARGET.localSteadyRatio);
  const others = othersCores(before, snapshot());
  console.log(
    [
      resultTable(report.rows),
      '',
      report.detail,
      '',
      ...report.notes,
      '',
      `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}. ` +
        `Took ${((performance.now() - started) / 1000).toFixed(0)} s. Other work meanwhile: ${others === undefined ? '?' : others.toFixed(2)} cores' worth; ` +
        `load average (1, 5, 15 min) before ${loadBefore.map((l) => l.toFixed(2)).join(', ')}, after ${loadavg()
          .map((l) => l.toFixed(2))
          .join(', ')}.`,
      'A partial run: bench/RESULTS.md is written by the whole `npm run bench` only.',
    ].join('\n'),
  );
  process.exit(0);
}

// ---- cost and capacity (bench/costModel.ts, bench/capacity.ts) ------------------------------------------------

const costSection = (
  intakeRows: Awaited<ReturnType<typeof measureIntakeCost>>['rows'],
  inputs: Measured,
  workerCpuUs: number,
  measuredWorker: boolean,
  memory: Awaited<ReturnType<typeof deployedMemory>>,
  frameIndex: boolean,
  worker: Awaited<ReturnType<typeof deployedWorker>>,
) => {
  // Fewer, larger invocations: the worker as it was, as deployed, and at the batch size of 200 the event source is deployed with.
  const workerSettings: WorkerSetting[] = [
    {
      name: 'before batching: 10 per invocation, one call per record',
      batch: { sales: ONE_CALL_PER_RECORD, case: ONE_CALL_PER_RECORD },
    },
    ...(worker.batched
      ? [
          {
            name: `batched, batchSize ${worker.batchSize} (deployed)`,
            batch: batchedWorker(worker.batchSize),
          },
        ]
      : []),
    ...(worker.batchSize < 200 ? [{ name: 'batched, batchSize 200', batch: batchedWorker(200) }] : []),
  ];
  const report = costReport(intakeRows, inputs, {
    memory,
    workerCpuUs,
    frameIndex,
    ...(worker.batched ? { workerBatch: batchedWorker(worker.batchSize) } : {}),
    workerSettings,
  });
  return {
    report,
    text: [
      `AWS cost per million records (${measuredWorker ? 'worker CPU measured in this run' : 'worker CPU from bench/RESULTS.md'}):`,
      '',
      report.tables,
      '',
      `Biggest item for 1-record sales requests: ${report.biggest.item}, ${(report.biggest.share * 100).toFixed(0)} % of the total.`,
    ].join('\n'),
  };
};

const capacitySection = (result: CapacityResult, memoryMb: number) => {
  const report = capacityReport(result, memoryMb);
  return {
    report,
    text: [
      `Delivery capacity (deployed settings: maximumConcurrency ${result.deployed.erp.maximumConcurrency}, batchSize ${result.deployed.erp.batchSize}, ERP_BATCH_SIZE ${result.deployed.erp.callSize}), on paper:`,
      '',
      report.paper,
      '',
      'Checked by simulation (the real worker handler against the SAP sandbox with injected latency):',
      '',
      report.simulation,
      '',
      ...report.notes,
    ].join('\n'),
  };
};

/** Replaces (or adds) one marked section of bench/RESULTS.md, leaving the rest as the last whole run wrote it. */
const writeSection = async (name: string, title: string, body: string) => {
  const path = join(benchDir, 'RESULTS.md');
  const current = await readFile(path, 'utf8').catch(() => '# Benchmark results\n');
  const block = `<!-- ${name}:start -->\n## ${title}\n\n${body}\n<!-- ${name}:end -->`;
  const marked = new RegExp(`<!-- ${name}:start -->[\\s\\S]*?<!-- ${name}:end -->`);
  const next = marked.test(current) ? current.replace(marked, block) : `${current.trimEnd()}\n\n${block}\n`;
  await writeFile(path, next);
};

const partFooter = (seconds: number) =>
  `${new Date().toISOString().slice(0, 10)}; ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; took ${seconds.toFixed(0)} s; ` +
  `load average (1, 5, 15 min) before ${loadBefore.map((l) => l.toFixed(2)).join(', ')}, after ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}.`;

if (costOnly) {
  progress('cost: warm intake cost (bench/intakeCost.ts), record sizes and log bytes…');
  const { rows } = await measureIntakeCost({ logging: [] });
  const [inputs, memory] = await Promise.all([measureCostInputs(), deployedMemory()]);
  const { text } = costSection(
    rows,
    inputs,
    ALLOWANCE.workerCpuUsPerDelivery,
    false,
    memory,
    await deployedFrameIndex(),
    await deployedWorker(),
  );
  const footer = `Written by \`npm run bench -- cost\` on ${partFooter((performance.now() - started) / 1000)}`;
  console.log(`${text}\n\n${footer}`);
  await writeSection('cost', 'AWS cost per million records', `${text}\n\n${footer}`);
  progress('wrote the cost section of bench/RESULTS.md');
  process.exit(0);
}
if (capacityOnly) {
  progress(
    'capacity: the deployed pollers driving the worker against the SAP sandbox with injected latency…',
  );
  const { text } = capacitySection(await measureCapacity(), (await deployedMemory()).erpDelivery);
  const footer = `Written by \`npm run bench -- capacity\` on ${partFooter((performance.now() - started) / 1000)}`;
  console.log(`${text}\n\n${footer}`);
  await writeSection('capacity', 'Delivery capacity', `${text}\n\n${footer}`);
  progress('wrote the capacity section of bench/RESULTS.md');
  process.exit(0);
}

const batchedTitle = 'Batched delivery: downstream calls per record, lone-record latency';
const outageTitle = 'Drain after an outage';
const outageNote = (sizes: number[]) =>
  sizes.includes(10_000)
    ? undefined
    : `Backlogs measured: ${sizes.join(', ')} (10,000 was not run here: it takes too long on this 2-core machine shared with other work).`;
const fairTitle = 'Fair share between clients';
const fairNote = (sizes: number[]) =>
  sizes.includes(100_000)
    ? undefined
    : `Floods measured: ${sizes.join(', ')} (100,000 is \`--fair-records 10000,100000\`: about a quarter of an hour per run on this 2-core machine).`;
if (fairOnly) {
  const report = fairReport(await measureFairShare(fairSizes), fairNote(fairSizes));
  const footer = `Written by \`npm run bench -- fair --fair-records ${fairSizes.join(',')}\` on ${partFooter((performance.now() - started) / 1000)}`;
  const body = `${resultTable(report.rows)}\n\n${report.text}\n\n${footer}`;
  console.log(body);
  await writeSection('fair', fairTitle, body);
  progress('wrote the fair section of bench/RESULTS.md');
  process.exit(0);
}
if (consoleOnly) {
  const report = consoleSearchReport(await measureConsoleSearch({ records: consoleRecords, searches: 200 }));
  const footer = `Written by \`npm run bench -- console${consoleRecords === 100_000 ? '' : ` --console-records ${consoleRecords}`}\` on ${partFooter((performance.now() - started) / 1000)}`;
  const body = `${resultTable(report.rows)}\n\n${report.text}\n\n${footer}`;
  console.log(body);
  await writeSection('console', consoleSearchTitle, body);
  progress('wrote the console section of bench/RESULTS.md');
  process.exit(0);
}
const intakeTitle = 'Local intake against the previous release';
if (intakeOnly) {
  const report = releaseIntakeReport(await measureReleaseIntake(intakeSettings));
  const footer = `Written by \`npm run bench -- intake --intake-requests ${intakeSettings.requests} --intake-rounds ${intakeSettings.rounds}\` on ${partFooter((performance.now() - started) / 1000)}`;
  const body = `${resultTable(report.rows)}\n\n${report.text}\n\n${footer}`;
  console.log(body);
  await writeSection('intake', intakeTitle, body);
  progress('wrote the intake section of bench/RESULTS.md');
  process.exit(0);
}
if (batchedOnly || outageOnly) {
  const report = batchedOnly
    ? batchedReport(await measureBatchedDelivery())
    : outageReport(await measureOutageDrain(outageSizes), outageNote(outageSizes));
  const name = batchedOnly ? 'batched' : 'outage';
  const footer = `Written by \`npm run bench -- ${name}${outageOnly ? ` --outage-records ${outageSizes.join(',')}` : ''}\` on ${partFooter((performance.now() - started) / 1000)}`;
  const body = `${resultTable(report.rows)}\n\n${report.text}\n\n${footer}`;
  console.log(body);
  await writeSection(name, batchedOnly ? batchedTitle : outageTitle, body);
  progress(`wrote the ${name} section of bench/RESULTS.md`);
  process.exit(0);
}

/** The cold-start rows of the table: import + build handler per function, then the bundles' sizes. */
const coldStartRows = (cold: Awaited<ReturnType<typeof measureColdStart>>): ResultRow[] => [
  ...cold.map((row) => {
    const r = row.oursMs / row.baselineMs;
    const noSchema = row.schemasCompiled === 0;
    return {
      benchmark: `cold start ${row.name}: import + build handler (median of ${row.oursSamples.length} fresh processes)`,
      ours: ms(row.oursMs),
      baseline: noSchema ? `${ms(row.baselineMs)} (same bundle: no schema)` : ms(row.baselineMs),
      ratio: ratio(r),
      target: noSchema ? 'n/a' : `≤ ${TARGET.coldStartRatio.toFixed(2)}x`,
      met: noSchema ? '—' : yesNo(r <= TARGET.coldStartRatio),
    };
  }),
  ...cold.map((row) => ({
    benchmark: `bundle size ${row.name} (entry .mjs; zip, chunks included)`,
    ours: `${kib(row.oursBytes)}; ${kib(row.oursZipBytes)}`,
    baseline: `${kib(row.baselineBytes)}; ${kib(row.baselineZipBytes)}`,
    ratio: ratio(row.oursBytes / row.baselineBytes),
    target: '—',
    met: '—',
  })),
];

if (coldOnly) {
  const label = args['cold-label'];
  const cold = await phase(
    'cold start',
    `cold start alone (${label}): bundling, ${samples} fresh processes per bundle…`,
    () => measureColdStart(samples),
  );
  const others = phases.at(-1)?.others;
  const footer =
    `Written by \`npm run bench -- cold --samples ${samples} --cold-label "${label}"\` on ${partFooter((performance.now() - started) / 1000)} ` +
    `Other work meanwhile: ${others === undefined ? '?' : others.toFixed(2)} cores' worth.`;
  const body = `${resultTable(coldStartRows(cold))}\n\n${footer}`;
  console.log(body);
  const name = `cold-${label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}`;
  await writeSection(name, `Cold start alone: ${label}`, body);
  progress(`wrote the ${name} section of bench/RESULTS.md`);
  process.exit(0);
}

const cold = await phase('cold start', `cold start: bundling, ${samples} fresh processes per bundle…`, () =>
  measureColdStart(samples),
);
const logged = args['no-log-cost'] ? [] : ['sales 1 record (JSON)', 'case (JSON)'];
const { rows: intake, logLineCpuUs } = await phase(
  'intake',
  'warm intake cost: handlers as deployed (JSON-protocol clients) and floor against the instant AWS endpoint…',
  () => measureIntakeCost({ logging: logged }),
);
const worker = await phase(
  'worker',
  `worker throughput: ${records} records per side, fauxqs + dynalite + instant SAP…`,
  () => measureWorkerThroughput(records),
);
const capacity = await phase(
  'capacity',
  'capacity: the deployed pollers, the worker, the SAP sandbox with injected latency…',
  () => measureCapacity(),
);
const batched = await phase(
  'batched',
  'batched delivery: calls per record by backlog, lone-record latency…',
  () => measureBatchedDelivery(),
);
const outage = await phase('outage', `drain after an outage: backlogs of ${outageSizes.join(', ')}…`, () =>
  measureOutageDrain(outageSizes),
);
const fair = await phase('fair', `fair share: a quiet client beside floods of ${fairSizes.join(', ')}…`, () =>
  measureFairShare(fairSizes),
);
const consoleSearch = await phase(
  'console',
  `console search: ${consoleRecords} records on npm start, by frame number and id…`,
  () => measureConsoleSearch({ records: consoleRecords, searches: 200 }),
);
const costInputs = await phase('cost', 'cost: record sizes and log bytes at the deployed level…', () =>
  measureCostInputs(),
);
const cost = costSection(
  intake,
  costInputs,
  worker.ours.cpuUsPerDelivery,
  true,
  await deployedMemory(),
  await deployedFrameIndex(),
  await deployedWorker(),
);
const capacityText = capacitySection(capacity, (await deployedMemory()).erpDelivery).text;
const local = await phase(
  'local stack',
  `local stack: npm start (cold burst, steady intake) and serverless-offline's ceiling, LOCAL_LAMBDA_CONCURRENCY ${localSettings.concurrencies.join(', ')}…`,
  () => measureLocalStack(localSettings),
);
const localReport = localStackReport(local, TARGET.localSteadyRatio);
const releaseIntake = releaseIntakeReport(
  await phase('intake', 'local intake: npm start of this tree against the previous release…', () =>
    measureReleaseIntake(intakeSettings),
  ),
);
const loadAfter = loadavg();
const seconds = (performance.now() - started) / 1000;
progress(`done in ${seconds.toFixed(0)} s`);

// ---- the table --------------------------------------------------------------------------------------------

const rows: ResultRow[] = [];

rows.push(...coldStartRows(cold));

const totalCalls = (calls: CallCounts) => Object.values(calls).reduce((sum, c) => sum + c.calls, 0);

for (const [row, clients] of [...intake.map((r) => [r, 'as deployed'] as const)]) {
  const r = row.oursCpuUs / row.floorCpuUs;
  rows.push({
    benchmark: `warm CPU per request: ${row.name}, ${clients}`,
    ours: `${us(row.oursCpuUs)} ± ${us(standardError(row.cpuUsPerBlock.ours))}`,
    baseline: `${us(row.floorCpuUs)} ± ${us(standardError(row.cpuUsPerBlock.floor))}`,
    ratio: ratio(r),
    target: `≤ ${TARGET.cpuRatio.toFixed(2)}x`,
    met: yesNo(r <= TARGET.cpuRatio),
  });
}
for (const row of intake) {
  const ours = totalCalls(row.oursCalls);
  const floor = totalCalls(row.floorCalls);
  if (row.records === 1) {
    rows.push({
      benchmark: `AWS calls per request: ${row.name}`,
      ours: count(ours),
      baseline: count(floor),
      ratio: ratio(ours / floor),
      target: `≤ ${TARGET.callsOneRecord}`,
      met: yesNo(ours <= TARGET.callsOneRecord + 1e-9),
    });
  } else {
    rows.push({
      benchmark: `AWS calls per record: ${row.name}`,
      ours: `${count(ours / row.records)} (${count(ours)}/request)`,
      baseline: `${count(floor / row.records)} (${count(floor)}/request)`,
      ratio: ratio(ours / floor),
      target: `≤ ${TARGET.callsPerRecordLarge}`,
      met: yesNo(ours / row.records <= TARGET.callsPerRecordLarge + 1e-9),
    });
  }
}

const workerRatio = worker.ours.perSecond / worker.bare.perSecond;
rows.push({
  benchmark: `worker deliveries per second (SAP, batch 10, ${worker.records} records)`,
  ours: `${worker.ours.perSecond.toFixed(0)}/s`,
  baseline: `${worker.bare.perSecond.toFixed(0)}/s`,
  ratio: ratio(workerRatio),
  target: `≥ ${TARGET.workerRatio.toFixed(2)}x`,
  met: yesNo(workerRatio >= TARGET.workerRatio),
});
const batchedText = batchedReport(batched);
const outageText = outageReport(outage, outageNote(outageSizes));
const fairText = fairReport(fair, fairNote(fairSizes));
const consoleText = consoleSearchReport(consoleSearch);
rows.push(...batchedText.rows, ...outageText.rows, ...fairText.rows, ...consoleText.rows);
rows.push(...localReport.rows, ...releaseIntake.rows);

// ---- detail tables ----------------------------------------------------------------------------------------

const byOperation = (calls: CallCounts) =>
  Object.entries(calls)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, c]) => `${op} ${count(c.calls)} (${bytes(c.bytes)})`)
    .join(', ');

const callsTable = markdownTable(
  [
    'request',
    'ours: calls/request',
    'ours: calls/record',
    'ours: by operation (request bytes)',
    'floor: by operation (request bytes)',
  ],
  intake.map((row) => [
    row.name,
    count(totalCalls(row.oursCalls)),
    count(totalCalls(row.oursCalls) / row.records),
    byOperation(row.oursCalls),
    byOperation(row.floorCalls),
  ]),
);

const workerSideRow = (label: string, side: WorkerSide) => [
  label,
  `${side.perSecond.toFixed(0)}/s`,
  us(side.cpuUsPerDelivery),
  Object.entries(side.callsPerDelivery)
    .map(([op, n]) => `${op} ${count(n)}`)
    .join(', '),
  `POST ${count(side.sapPostsPerDelivery)}`,
];
const workerTable = markdownTable(
  ['worker', 'deliveries/s', 'worker CPU per delivery', 'AWS calls per delivery', 'SAP calls per delivery'],
  [
    workerSideRow('ours (functions/deliveryWorker.ts via pollOnce)', worker.ours),
    workerSideRow('bare loop (baseline)', worker.bare),
  ],
);

const intakeWall = markdownTable(
  ['request', 'ours: wall ms/request', 'floor: wall ms/request', 'requests measured per side'],
  intake.map((row) => [row.name, ms(row.oursWallMs, 2), ms(row.floorWallMs, 2), String(row.requests)]),
);

const notes: string[] = [];
const loggedRows = intake.filter((row) => row.oursLoggingCpuUs !== undefined);
if (logLineCpuUs !== undefined && loggedRows.length > 0) {
  notes.push(
    `Logging is not in the figures above (POWERTOOLS_LOG_LEVEL=ERROR: an accepted request logs nothing). At INFO an ` +
      `accepted request writes one JSON line, which costs ${us(logLineCpuUs)} of CPU (3000 lines timed in the ` +
      `handlers' process, to its stdout pipe). The handlers with the logger at INFO, measured alongside: ` +
      loggedRows
        .map(
          (row) =>
            `${row.name} ${us(row.oursLoggingCpuUs as number)} against ${us(row.oursCpuUs)} at ERROR, a difference ` +
            `of ${us((row.oursLoggingCpuUs as number) - row.oursCpuUs)} ± ${us(Math.hypot(standardError(row.cpuUsPerBlock.ours), standardError(row.cpuUsPerBlock.oursLogging)))} ` +
            '(standard error over the blocks)',
        )
        .join('; ') +
      '.',
  );
}

// ---- print and write --------------------------------------------------------------------------------------

const command = `npm run bench   # = node bench/run.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
const main = resultTable(rows);
const busy = phases.filter((p) => p.others !== undefined && p.others > 0.25);
const othersLine = phases.some((p) => p.others !== undefined)
  ? `Other work on the machine meanwhile (cores' worth of CPU, of ${cpus().length}): ${phases
      .map((p) => `${p.name} ${p.others === undefined ? '?' : p.others.toFixed(2)}`)
      .join(', ')}.` +
    (busy.length
      ? " WARNING: the machine was busy with other work: ratios move under load (the worker's towards 1, as its " +
        'own CPU stops being what limits it, and cold starts stretch unevenly). Judge targets on a quiet machine.'
      : '')
  : 'Other work on the machine meanwhile: unknown (no /proc).';
const loads = (l: number[]) => l.map((v) => v.toFixed(2)).join(', ');
const loadLine = `Load average (1, 5, 15 min) at the start: ${loads(loadBefore)}; at the end: ${loads(loadAfter)}.`;
const missed = rows.filter((r) => r.met === 'NO').map((r) => r.benchmark);

const console_ = [
  main,
  '',
  'AWS calls (instant AWS endpoint, counted by the endpoint):',
  callsTable,
  '',
  'Worker:',
  workerTable,
  '',
  'Local stack (npm start):',
  localReport.detail,
  '',
  ...localReport.notes,
  ...(notes.length ? ['', ...notes] : []),
  '',
  cost.text,
  '',
  capacityText,
  '',
  batchedText.text,
  '',
  outageText.text,
  '',
  fairText.text,
  '',
  consoleText.text,
  '',
  missed.length ? `Targets missed: ${missed.length} (see bench/FINDINGS.md)` : 'All targets met.',
  `Machine: ${machine}. Took ${seconds.toFixed(0)} s.`,
  othersLine,
  loadLine,
  `Reproduce: ${command}`,
].join('\n');
console.log(console_);

const markdown = `# Benchmark results

Written by \`npm run bench\` (\`node bench/run.ts\`) on ${new Date().toISOString().slice(0, 10)}; ${machine}.
Every figure has its baseline measured in the same run, on the same machine; the ratio is ours / baseline.
Figures move with the machine's load (run twice to see the spread); the ratios are what the targets judge.
${othersLine}
${loadLine}

${main}

${missed.length ? `**Targets missed: ${missed.length}.** Why, and what would change it: [FINDINGS.md](FINDINGS.md).` : 'All targets met.'}

## How each figure is measured

- **Cold start**: each bundle as \`npm run bundle\` builds it (\`bundleFunction\` of scripts/bundle.ts, to a temporary
  directory; API functions carry the JSON-protocol AWS clients of lib/aws/jsonProtocol in place of the SDK's); a fresh \`node\` process per sample (\`NODE_OPTIONS=--enable-source-maps\` as deployed) times
  \`await import(bundle)\`, which evaluates the module and builds the middy handler; median of ${samples}, ours and
  baseline alternating. Baseline: the same handler through the same \`bundleFunction\`, given a plugin (its
  \`plugins\` parameter) that replaces \`lib/validation/generated/*.js\` with \`new Ajv({…}).compile(schema)\` (the
  options, keywords and email format of scripts/build-validators.ts): only the validators differ.
  recordStatus validates no schema: its "baseline" is the same bundle, shown for the noise level only.
- **Warm CPU per request**: \`process.cpuUsage()\` (user + system) of the process running the handlers
  (functions/*.ts as they are, middy and all; "as deployed": with the JSON-protocol clients in place of the SDK's,
  through Node module hooks, as the bundles carry them; "with the SDK clients instead": for comparison), over ${intake[0]?.requests ?? '?'} requests per side after warm-up
  (${intake.find((r) => r.records > 1)?.requests ?? '?'} for 500 records) in ${intake[0]?.cpuUsPerBlock.ours.length ?? '?'} blocks per side, ours and floor alternating; the figure is
  the median of the blocks' CPU per request, ± the standard error over the blocks; every request unique
  (new FrameNum / email, so every record is new). AWS is an instant endpoint in another process
  (bench/instantAws.ts: every call succeeds at once, every read finds nothing) that counts calls per
  operation. POWERTOOLS_LOG_LEVEL=ERROR, POWERTOOLS_METRICS_DISABLED=true; API keys from a local file
  (API_KEYS_FILE, as npm start and the tests keep them). Floor (bench/intakeFloor.ts): the same body through
  \`JSON.parse\` (form: \`node:querystring\`) and lib/validation, then the same operations, counts, batch sizes,
  parallelism and payload sizes (see the bytes below) made bare through the SDK (its own clients, configured as
  lib/aws/clients.ts configures them); no middleware, no key check, no content ids, no duplicate decisions.
- **Worker**: functions/deliveryWorker.ts driven by \`pollOnce\` (local/queuePoller.ts, batch 10) against
  fauxqs and dynalite (started as testkit does, in their own process) and an instant SAP Gateway
  (bench/instantSap.ts: CSRF token fetch, POST → 201 \`{"d":{"DocumentNumber":…}}\`, no checks; SAP rather than
  Salesforce because sales registrations are the volume). Records are pre-accepted per block with lib functions
  (putStatusRecords, sendRecords): ${worker.records} per side in 4 alternating blocks after a warm-up. Baseline: a bare
  loop with the same SQS and DynamoDB clients: ReceiveMessage (10); per message, in parallel as the batch
  processor does: the same conditional claim (UpdateItem with a lease), POST (fetch), the same conditional
  outcome UpdateItem; then DeleteMessageBatch.
- **Local stack** (bench/localStack.ts): for each LOCAL_LAMBDA_CONCURRENCY of ${local.settings.concurrencies.join(', ')}${local.settings.rounds > 1 ? ` (${local.settings.rounds} rounds, interleaved)` : ''}, a fresh
  \`npm start\` as a person runs it (own temporary DATA_DIR, free PORT, built-in sandboxes, the caller's AWS and
  service settings removed). The moment it prints \`ready:\`, the cold burst: ${local.settings.burstRequests} distinct requests,
  ${local.settings.burstInFlight} in flight, alternating \`POST /erp/sales_registration\` (one record, unique FrameNum, key
  \`example-dealer\` of DATA_DIR/api-keys.json) and \`POST /crm/case\` (distinct comments, key \`example-web-forms\`).
  Once the sandboxes hold its records: ${local.settings.warmupRequests} warm-up requests, then the steady run, ${local.settings.steadyRequests} requests
  with ${local.settings.steadyInFlight} in flight (one keep-alive connection each), the same mix; requests/s over the run,
  latency of each request to its last byte (p50, p99 by nearest rank). Ceiling: bench/trivialService, one
  function with the same two POST routes whose handler answers 200 \`{}\` at once, served by the same osls
  and serverless-offline with the same preloads (local/warmPool.ts, the JSON-protocol clients, the
  orphan guard) and LOCAL_LAMBDA_CONCURRENCY, launched as local/offline.ts launches ours, driven by the
  same client with the same bodies, warm-up and run. The client (node:http) runs in the benchmark's process.
  CPU: utime + stime of each process from /proc before and after the steady run, serverless-offline split into
  its main thread and its handler threads (threads named WorkerThread); the rest of it is V8's helper threads.

## AWS calls per request (intake)

${callsTable}

## Worker detail

${workerTable}

## Local stack (npm start)

${localReport.detail}

${localReport.notes.map((n) => `- ${n}`).join('\n')}

## Wall time per intake request (instant AWS, sequential requests; for information)

${intakeWall}
${notes.length ? `\n## Notes\n\n${notes.map((n) => `- ${n}`).join('\n')}\n` : ''}
<!-- cost:start -->
## AWS cost per million records

${cost.text}
<!-- cost:end -->

<!-- capacity:start -->
## Delivery capacity

${capacityText}
<!-- capacity:end -->

<!-- batched:start -->
## ${batchedTitle}

${batchedText.text}
<!-- batched:end -->

<!-- outage:start -->
## ${outageTitle}

${outageText.text}
<!-- outage:end -->

<!-- fair:start -->
## ${fairTitle}

${fairText.text}
<!-- fair:end -->

<!-- console:start -->
## ${consoleSearchTitle}

${consoleText.text}
<!-- console:end -->

<!-- intake:start -->
## ${intakeTitle}

${releaseIntake.text}
<!-- intake:end -->

## Reproduce

\`\`\`sh
${command}
\`\`\`
`;
await writeFile(join(benchDir, 'RESULTS.md'), markdown);
progress('wrote bench/RESULTS.md');
