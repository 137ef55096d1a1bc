/**
 * Tracing's budget (contract section 8, "Cheap"): before tracing (a git worktree of BEFORE_TRACING, the commit before
 * it was merged) and this tree side by side, in alternated rounds (before, after, before, after) on the same
 * machine: the intake bundles' cold start (fresh processes timing `await import(bundle)`, as bench/coldStart.ts) and
 * zipped size, warm CPU per intake request (bench/intakeCost.ts of each tree, against its instant AWS); and in this
 * tree, the worker's CPU per delivery with TRACES_EXPORT=xray against TRACES_EXPORT=off (bench/workerThroughput.ts).
 * With export on, the spans go, signed as on AWS, to a sink in this process that counts them and their bytes: the
 * spans per record and the bytes per span, priced with bench/prices.ts's span ingestion.
 *
 * `node bench/tracing.ts [--rounds 2] [--samples 11] [--before <worktree of BEFORE_TRACING>] [--write]`: prints
 * the section; `--write` puts it in RESULTS.md between its `tracing` markers. Without `--before`, a worktree is made
 * (this tree's node_modules, its own generated validators) and removed afterwards.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { timeImport } from './coldStart.ts';
import { ALLOWANCE } from './costModel.ts';
import { PRICES } from './prices.ts';
import { baseEnv, benchDir, median, projectRoot, runNodeJson } from './proc.ts';

/** main before the tracing branch was merged. */
export const BEFORE_TRACING = 'dffa8d9';

const INTAKE = [
  { name: 'salesRegistration', handler: 'functions/salesRegistration.handler' },
  { name: 'crmCase', handler: 'functions/crmCase.handler' },
] as const;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    'intake-rounds': { type: 'string' },
    samples: { type: 'string', default: '11' },
    before: { type: 'string' },
    write: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const samples = Number(values.samples);
const intakeRounds = Number(values['intake-rounds'] ?? rounds);
const started = performance.now();
const loadBefore = loadavg();
const progress = (text: string) => process.stderr.write(`tracing: ${text}\n`);

/** What the sink took since the last reset: OTLP requests, spans by name, bytes. */
const sink = { requests: 0, spans: 0, bytes: 0, names: new Map<string, number>() };
const resetSink = () => {
  sink.requests = 0;
  sink.spans = 0;
  sink.bytes = 0;
  sink.names.clear();
};
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    sink.requests++;
    sink.bytes += body.length;
    try {
      for (const resource of JSON.parse(body.toString('utf8')).resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? []) {
            sink.spans++;
            sink.names.set(span.name, (sink.names.get(span.name) ?? 0) + 1);
          }
    } catch {
      // counted as bytes only
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
/** Export on, as on AWS (signed for xray), to the sink. */
const exportOn = {
  TRACES_EXPORT: 'xray',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
};
const exportOff = { TRACES_EXPORT: 'off' };

const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: projectRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();

let madeWorktree: string | undefined;
const beforeTree =
  values.before ?? join(await mkdtemp(join(tmpdir(), 'dealer-gateway-before-tracing-')), 'tree');
if (!values.before) {
  progress(`worktree of ${BEFORE_TRACING}…`);
  git('worktree', 'add', '--detach', beforeTree, BEFORE_TRACING);
  madeWorktree = beforeTree;
  await symlink(join(projectRoot, 'node_modules'), join(beforeTree, 'node_modules'));
  execFileSync(process.execPath, ['scripts/build-validators.ts'], { cwd: beforeTree, stdio: 'ignore' });
}
const trees = { before: beforeTree, after: projectRoot } as const;
type Side = keyof typeof trees;

/**
 * Runs `code` (an ES module) with Node in `cwd`, returning its last stdout line's JSON. Asynchronously: the sink
 * in this process must keep answering while the child exports to it.
 */
const runIn = <T>(cwd: string, code: string, env: NodeJS.ProcessEnv = baseEnv()): Promise<T> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.on('exit', (status) => {
      if (status !== 0) reject(new Error(`node -e in ${cwd} exited with ${status}:\n${err.slice(-4000)}`));
      else {
        const lines = out.trim().split('\n');
        resolve(JSON.parse(lines[lines.length - 1]) as T);
      }
    });
  });

try {
  // ---- Bundles: each tree's own bundleFunction, into a directory of its own ----
  const outDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-tracing-bundles-'));
  const bundles: Record<Side, Record<string, { file: string; bytes: number; zipBytes: number }>> = {
    before: {},
    after: {},
  };
  for (const side of ['before', 'after'] as const) {
    for (const { name, handler } of INTAKE) {
      const result = await runIn<{ bytes: number; zipBytes: number }>(
        trees[side],
        `import { bundleFunction } from './tools/bundle.ts';
         const r = await bundleFunction(${JSON.stringify(`${side}-${name}`)}, ${JSON.stringify(handler)}, ${JSON.stringify(outDir)});
         console.log(JSON.stringify(r));`,
      );
      const entry = handler.slice(0, handler.lastIndexOf('.'));
      bundles[side][name] = { ...result, file: join(outDir, `${side}-${name}`, `${entry}.mjs`) };
    }
  }
  progress('bundled both trees');

  // ---- Cold start: alternated fresh imports, export on for this tree (as on AWS) ----
  const cold: Record<string, Record<Side, number[]>> = {};
  for (const { name } of INTAKE) {
    cold[name] = { before: [], after: [] };
    await timeImport(bundles.before[name].file);
    await timeImport(bundles.after[name].file);
    for (let i = 0; i < samples * rounds; i++)
      for (const side of ['before', 'after'] as const)
        cold[name][side].push(await timeImport(bundles[side][name].file));
  }
  progress('cold starts timed');
  await writeFile('/tmp/dealer-gateway-tracing-partial.json', JSON.stringify({ cold, bundles }));

  // ---- Warm CPU per intake request: each tree's own bench/intakeCost.ts, alternated ----
  interface IntakeRun {
    rows: { name: string; requests: number; oursCpuUs: number; floorCpuUs: number }[];
  }
  const warm: Record<Side, IntakeRun[]> = { before: [], after: [] };
  let intakeSpans = { spans: 0, bytes: 0, requests: 0, names: new Map<string, number>() };
  for (let round = 0; round < intakeRounds; round++) {
    for (const side of ['before', 'after'] as const) {
      resetSink();
      progress(`warm intake, round ${round + 1}, ${side}…`);
      const run = await runIn<IntakeRun>(
        trees[side],
        `const { measureIntakeCost } = await import('./bench/intakeCost.ts');
         console.log(JSON.stringify(await measureIntakeCost()));`,
        // The key npm start and the tests make locally (lib/intake/contentIdKey.ts).
        { ...baseEnv(), ...exportOn, CONTENT_ID_KEY: 'bench-tracing-content-id-key' },
      );
      warm[side].push(run);
      await writeFile('/tmp/dealer-gateway-tracing-partial.json', JSON.stringify({ cold, bundles, warm }));
      if (side === 'after')
        intakeSpans = {
          spans: sink.spans,
          bytes: sink.bytes,
          requests: sink.requests,
          names: new Map(sink.names),
        };
    }
  }

  // ---- The worker's CPU per delivery, this tree: export on against off, alternated ----
  interface WorkerRun {
    records: number;
    ours: { delivered: number; cpuUsPerDelivery: number; perSecond: number };
  }
  const worker: Record<'on' | 'off', WorkerRun[]> = { on: [], off: [] };
  let workerFailure: string | undefined;
  let workerSpans = { spans: 0, bytes: 0, delivered: 0, names: new Map<string, number>() };
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['off', 'on'] as const) {
      resetSink();
      progress(`worker, round ${round + 1}, export ${mode}…`);
      const run = await runNodeJson<WorkerRun>([`${benchDir}/workerThroughput.ts`, '500'], {
        ...baseEnv(),
        ...(mode === 'on' ? exportOn : exportOff),
      }).catch((error: Error) => {
        // The reason only, without this machine's paths (RESULTS.md is read elsewhere).
        workerFailure = (
          error.message.split('\n').find((line) => line.startsWith('Error:')) ?? error.message
        ).replaceAll(`${process.cwd()}/`, '');
        return undefined;
      });
      if (!run) break;
      worker[mode].push(run);
      if (mode === 'on')
        workerSpans = {
          spans: sink.spans,
          bytes: sink.bytes,
          delivered: run.ours.delivered,
          names: new Map(sink.names),
        };
    }
  }

  // ---- Report ----
  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  const pct = (after: number, before: number) =>
    `${after >= before ? '+' : ''}${fmt((after / before - 1) * 100)} %`;
  const lines: string[] = [];
  lines.push('| measure | before tracing | with tracing | change | target | met |');
  lines.push('| --- | --- | --- | --- | --- | --- |');
  for (const { name } of INTAKE) {
    const b = median(cold[name].before);
    const a = median(cold[name].after);
    lines.push(
      `| ${name} cold start (packaged bundle, median of ${cold[name].after.length} fresh imports) | ${fmt(b)} ms | ${fmt(a)} ms | ${a >= b ? '+' : ''}${fmt(a - b)} ms | ≤ +15 ms | ${a - b <= 15 ? 'yes' : 'NO'} |`,
    );
  }
  const scenarioNames = warm.after[0]?.rows.map((r) => r.name) ?? [];
  for (const scenario of scenarioNames) {
    const cpu = (side: Side) =>
      median(warm[side].map((run) => run.rows.find((r) => r.name === scenario)?.oursCpuUs ?? NaN));
    const b = cpu('before');
    const a = cpu('after');
    lines.push(
      `| warm CPU per request, ${scenario} (median of ${intakeRounds} runs' medians) | ${fmt(b, 0)} µs | ${fmt(a, 0)} µs | ${pct(a, b)} | ≤ +10 % | ${a / b - 1 <= 0.1 ? 'yes' : 'NO'} |`,
    );
  }
  for (const { name } of INTAKE) {
    const b = bundles.before[name];
    const a = bundles.after[name];
    lines.push(
      `| ${name} zip (source maps included) | ${fmt(b.zipBytes / 1024)} KiB | ${fmt(a.zipBytes / 1024)} KiB | ${pct(a.zipBytes, b.zipBytes)} | (none) | |`,
    );
  }
  const perDelivery = (mode: 'on' | 'off') => median(worker[mode].map((run) => run.ours.cpuUsPerDelivery));
  const off = perDelivery('off');
  const on = perDelivery('on');
  if (workerFailure) {
    // The spans of a batch and their export alone (bench/tracingBatchSpans.ts), beside the worker's whole CPU per
    // delivery as the cost model takes it (bench/costModel.ts).
    const spans = await runNodeJson<{ onUsPerBatch: number; offUsPerBatch: number; spansPerBatch: number }>([
      `${benchDir}/tracingBatchSpans.ts`,
    ]);
    const whole = ALLOWANCE.workerCpuUsPerDelivery * 10;
    lines.push(
      `| worker CPU per batch of 10 deliveries: its ${spans.spansPerBatch} spans made (export off) and exported signed (xray), alone (bench/tracingBatchSpans.ts; bench/workerThroughput.ts failed: ${workerFailure}) | ${fmt(whole / 1000, 1)} ms (the worker's, bench/costModel.ts) | + ${fmt(spans.offUsPerBatch / 1000, 2)} ms off, + ${fmt(spans.onUsPerBatch / 1000, 2)} ms xray | +${fmt((spans.onUsPerBatch / whole) * 100)} % | (none) | |`,
    );
  } else
    lines.push(
      `| worker CPU per batch of 10 deliveries (TRACES_EXPORT off → xray, this tree, median of ${rounds} runs) | ${fmt((off * 10) / 1000, 2)} ms | ${fmt((on * 10) / 1000, 2)} ms | ${pct(on, off)} | (none) | |`,
    );

  // Spans per record: intake's per request of one record (a bigger request shares its span), the worker's per
  // delivery, and the webhook dispatcher's two per post (its span and the POST's).
  const intakeOneRecord = 1;
  // Not measured (the worker's bench failed): its attempt, its batch's downstream call and the events' publication,
  // as the end-to-end trace of docs/operations.md shows them.
  const workerPerRecord = workerSpans.delivered ? workerSpans.spans / workerSpans.delivered : 3;
  const webhookPerRecord = 2;
  const spansPerRecord = intakeOneRecord + workerPerRecord + webhookPerRecord;
  const bytesPerSpan =
    (intakeSpans.bytes + workerSpans.bytes) / Math.max(1, intakeSpans.spans + workerSpans.spans);
  const gbPerMillion = (spansPerRecord * bytesPerSpan * 1e6) / 1024 ** 3;
  const usdPerMillion = gbPerMillion * PRICES.spansIngestedGb.usd;
  lines.push(
    `| spans on AWS per million records (${fmt(spansPerRecord)} spans a record, ${fmt(bytesPerSpan, 0)} B a span as OTLP JSON) | | $${fmt(usdPerMillion, 2)} | | (none) | |`,
  );
  const names = (m: Map<string, number>) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .map(([n, c]) => `${n} ${c}`)
      .join(', ');
  const text = [
    lines.join('\n'),
    '',
    `- Before: a git worktree of ${BEFORE_TRACING} (main before tracing was merged); with tracing: this tree, TRACES_EXPORT=xray exporting (signed, as on AWS) to a local sink. Cold start: each tree's own \`bundleFunction\` (tools/bundle.ts), fresh Node processes timing \`await import(bundle)\`, before and after alternating; the exporter is a chunk of its own, loaded when the first span ends, after the import. Warm CPU: each tree's own bench/intakeCost.ts (the handler in a child process against the instant AWS endpoint, CPU per request, the median of its blocks), ${intakeRounds} round(s) each, alternating. Worker: bench/workerThroughput.ts (500 sales through functions/deliveryWorker.ts, batches of 10) with TRACES_EXPORT=off and =xray alternating.`,
    `- Spans the sink took: intake's ${intakeSpans.spans} in ${intakeSpans.requests} exports (${names(intakeSpans.names)}); the worker's ${workerSpans.spans} for ${workerSpans.delivered} deliveries (${names(workerSpans.names)}). A record: ${intakeOneRecord} intake span (one-record requests), ${fmt(workerPerRecord)} of the worker, ${webhookPerRecord} of its webhook post (when its client has a webhook). Priced at ${PRICES.spansIngestedGb.per}, $${PRICES.spansIngestedGb.usd} (${PRICES.spansIngestedGb.source}); X-Ray's own indexing of 1 % of the spans as trace summaries is included in it; the OTLP JSON size stands for the size CloudWatch bills.`,
    '',
    `Written by \`node bench/tracing.ts --rounds ${rounds} --samples ${samples} --intake-rounds ${intakeRounds}\` on ${new Date().toISOString().slice(0, 10)}; ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; took ${((performance.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) before ${loadBefore.map((l) => l.toFixed(2)).join(', ')}, after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}.`,
  ].join('\n');
  console.log(text);
  await writeFile(
    join(outDir, '..', 'dealer-gateway-tracing-bench.json'),
    JSON.stringify({
      cold,
      warm,
      worker,
      bundles,
      intakeSpans: { ...intakeSpans, names: [...intakeSpans.names] },
      workerSpans: { ...workerSpans, names: [...workerSpans.names] },
    }),
  );
  if (values.write) {
    const path = join(benchDir, 'RESULTS.md');
    const current = await readFile(path, 'utf8');
    const block = `<!-- tracing:start -->\n## Tracing: before and after\n\n${text}\n<!-- tracing:end -->`;
    const marked = /<!-- tracing:start -->[\s\S]*?<!-- tracing:end -->/;
    await writeFile(
      path,
      marked.test(current) ? current.replace(marked, block) : `${current.trimEnd()}\n\n${block}\n`,
    );
  }
  await rm(outDir, { recursive: true, force: true });
} finally {
  server.close();
  if (madeWorktree) git('worktree', 'remove', '--force', madeWorktree);
}
