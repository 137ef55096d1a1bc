/**
 * The tables of the fair-share benchmark (bench/fairShare.ts): a quiet client's delivery times beside a flood,
 * fair and first in, first out, against no flood; the flood's drain rate fair against first in, first out.
 */
import type { FairShareResult, FloodRun } from './fairShare.ts';
import { markdownTable, type ResultRow, ratio, yesNo } from './table.ts';

const thousands = (value: number) => Math.round(value).toLocaleString('en-GB');
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export interface FairReport {
  rows: ResultRow[];
  text: string;
}

/**
 * Result rows (for the summary table) and the section's text.
 *
 * @example
 * const { rows, text } = fairReport(await measureFairShare([10000]));
 */
/** How long a batch of the fair flood took on average: what a quiet record waits for, once or twice. */
const batchSeconds = (result: FairShareResult) =>
  result.runs
    .filter((run) => run.fair)
    .map(
      (run) =>
        // maximumConcurrency batches at once: each took that many times the time per batch of the drain rate.
        `a batch of ${result.deployed.batchSize} took ${((result.deployed.maximumConcurrency * result.deployed.batchSize) / run.recordsPerSecond).toFixed(1)} s on average in the flood of ${thousands(run.records)}, ${result.deployed.maximumConcurrency} at once`,
    )
    .join('; ');

export const fairReport = (result: FairShareResult, note?: string): FairReport => {
  const d = result.deployed;
  const goalMs = 2000 + d.windowSeconds * 1000;
  const fifoOf = (run: FloodRun) => result.runs.find((r) => !r.fair && r.records === run.records);
  const rows: ResultRow[] = [];
  for (const run of result.runs.filter((r) => r.fair)) {
    const fifo = fifoOf(run);
    rows.push({
      benchmark: `quiet client, p99 accepted → delivered, while another client's ${thousands(run.records)} drain (fair)`,
      ours: `${s(run.quiet.p99Ms)} (p50 ${s(run.quiet.p50Ms)})`,
      baseline: `${s(result.noFlood.p99Ms)} with no flood (p50 ${s(result.noFlood.p50Ms)}); first in, first out ${fifo ? s(fifo.quiet.p99Ms) : '—'}`,
      ratio: ratio(run.quiet.p99Ms / result.noFlood.p99Ms),
      target: `≤ ${s(goalMs)} (2 s + the ${d.windowSeconds} s window)`,
      met: yesNo(run.quiet.p99Ms <= goalMs),
    });
    if (fifo)
      rows.push({
        benchmark: `flood of ${thousands(run.records)}: its drain rate, fair against first in, first out`,
        ours: `${run.recordsPerSecond.toFixed(1)} records/s`,
        baseline: `${fifo.recordsPerSecond.toFixed(1)} records/s (no group ids: first in, first out)`,
        ratio: ratio(run.recordsPerSecond / fifo.recordsPerSecond),
        target: '≥ 0.90x',
        met: yesNo(run.recordsPerSecond / fifo.recordsPerSecond >= 0.9),
      });
  }
  const table = markdownTable(
    ['flood', 'poller', 'quiet client p50 / p99 (records)', 'flood drained in', 'flood records/s'],
    [
      [
        'none',
        'fair',
        `${s(result.noFlood.p50Ms)} / ${s(result.noFlood.p99Ms)} (${result.noFlood.samplesMs.length})`,
        '—',
        '—',
      ],
      ...result.runs.map((run) => [
        thousands(run.records),
        run.fair ? 'fair' : 'first in, first out',
        `${s(run.quiet.p50Ms)} / ${s(run.quiet.p99Ms)} (${run.quiet.samplesMs.length})`,
        `${run.drainSeconds.toFixed(1)} s`,
        run.recordsPerSecond.toFixed(1),
      ]),
    ],
  );
  const notes = [
    `Sales registrations to the SAP sandbox (own process), functions/deliveryWorker.ts driven by the local runner's own poller (local/queuePoller.ts \`startPoller\`, as \`npm start\` runs it: up to maximumConcurrency ${d.maximumConcurrency} invocations at once, batchSize ${d.batchSize}, batching window ${d.windowSeconds} s), fauxqs + dynalite in their own process. ` +
      "The flood: the flooding client's records accepted and queued (status records and messages, as intake leaves them, 500 a request) before the poller starts. The quiet client then has one record accepted a second until the flood has drained; its time runs from being accepted and queued (when intake answers 200) to the worker's write of `delivered` (the status record's `updatedAt`). " +
      "Fair: every message carries its client as its MessageGroupId, so the queue is a fair queue (fauxqs made one by local/emulators/fauxqs/fairQueue.ts, as a standard queue is on AWS): a receive is served the quiet client's record before the flood's, whose client holds more than its share in flight. First in, first out: the same poller and queue, the messages carrying no group id (as before fair queueing), so the queue serves them in the order they came.",
    `A quiet record is received first by the next batch to start, which starts as soon as one of the ${d.maximumConcurrency} in flight ends (${batchSeconds(result)}), whatever the flood's size; first in its batch, it is delivered after the batch's first call (the worker makes a batch's calls one at a time and records each call's outcomes while the next goes out), not its last. First in, first out it waits for the whole backlog ahead of it. The goal (2 s plus the window) needs a batch to take well under 2 s: on AWS, with each invocation its own CPU and SAP's own latency, or here on a quiet machine. On this 2-core machine dynalite, fauxqs, the sandbox and the worker share the cores with other work.`,
    ...(note ? [note] : []),
  ];
  return { rows, text: [table, '', ...notes.map((n) => `- ${n}`)].join('\n') };
};
