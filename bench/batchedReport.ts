/**
 * The tables of the batched-delivery benchmark (bench/batchedDelivery.ts): downstream calls per record by backlog,
 * worker time per record, lone-record latency with and without the batching window, and the capacity within a
 * share of a Salesforce org's daily API allowance; with the rows the main results table carries.
 */
import type { BatchedResult, Downstream, DrainRun } from './batchedDelivery.ts';
import { markdownTable, type ResultRow, ratio, us, yesNo } from './table.ts';

/** The goals of batched delivery under a backlog of 1,000: records per downstream call. */
export const BATCH_GOALS: Record<Downstream, number> = { salesforce: 100, sap: 20 };
/**
 * The Salesforce allowance the capacity table is stated against: an Enterprise Edition org with 15 licences,
 * 100,000 + 1,000 per licence calls a day (Salesforce's Developer Limits and Allocations, API request limits).
 */
export const SALESFORCE_ALLOWANCE = { callsPerDay: 115_000, share: 0.2 } as const;

const NAMES: Record<Downstream, string> = { sap: 'SAP', salesforce: 'Salesforce' };
const UNIT: Record<Downstream, string> = { sap: 'registrations', salesforce: 'cases' };
const thousands = (value: number) => Math.round(value).toLocaleString('en-GB');
const perCall = (run: { records: number; calls: number }) => run.records / Math.max(1, run.calls);
const fixed = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(1));

export interface BatchedReport {
  rows: ResultRow[];
  text: string;
}

export const batchedReport = (result: BatchedResult): BatchedReport => {
  const rows: ResultRow[] = [];
  const downstreams: Downstream[] = ['sap', 'salesforce'];
  const sizesOf = (downstream: Downstream) =>
    [...new Set(result.drains.filter((d) => d.downstream === downstream).map((d) => d.batchSize))].sort(
      (a, b) => a - b,
    );
  const drainOf = (downstream: Downstream, records: number, batchSize: number) =>
    result.drains.find(
      (d) => d.downstream === downstream && d.records === records && d.batchSize === batchSize,
    ) as DrainRun;
  const singleOf = (downstream: Downstream, records: number) =>
    result.singles.find((s) => s.downstream === downstream && s.records === records);
  const deployedLabel = (downstream: Downstream, size: number) =>
    size === result.deployed[downstream].batchSize
      ? `batchSize ${size}, deployed`
      : `batchSize ${size}, not deployed`;

  // Main-table rows: the goal under a backlog of 1,000, at each batch size measured.
  for (const downstream of downstreams) {
    for (const size of sizesOf(downstream)) {
      const run = drainOf(downstream, 1000, size);
      const today = singleOf(downstream, 1000);
      if (!run || !today) continue;
      rows.push({
        benchmark: `${NAMES[downstream]} ${UNIT[downstream]} per downstream call, backlog 1,000, through the worker (${deployedLabel(downstream, size)}, window ${run.windowSeconds} s)`,
        ours: `${fixed(perCall(run))} (${run.calls} calls)`,
        baseline: `${fixed(perCall(today))} (${today.calls} calls, one per record)`,
        ratio: ratio(run.calls / today.calls),
        target: `≥ ${BATCH_GOALS[downstream]} per call`,
        met: yesNo(perCall(run) >= BATCH_GOALS[downstream]),
      });
    }
  }
  for (const downstream of downstreams) {
    const [none, windowed] = [0, 1].map((i) => result.latency.filter((l) => l.downstream === downstream)[i]);
    if (!none || !windowed) continue;
    const extraMs = windowed.medianMs - none.medianMs;
    rows.push({
      benchmark: `${NAMES[downstream]}: a lone record, send to delivered, batching window ${windowed.windowSeconds} s (median of ${windowed.samplesMs.length})`,
      ours: `${windowed.medianMs.toFixed(0)} ms`,
      baseline: `${none.medianMs.toFixed(0)} ms (window 0)`,
      ratio: ratio(windowed.medianMs / none.medianMs),
      target: `≤ window 0 + ${windowed.windowSeconds * 1000} ms (± 2 %: timers)`,
      met: yesNo(extraMs <= windowed.windowSeconds * 1000 * 1.02),
    });
  }

  // Calls per record by backlog.
  const callsRows: string[][] = [];
  for (const downstream of downstreams) {
    for (const records of result.backlogs) {
      const today = singleOf(downstream, records);
      const cells = sizesOf(downstream).map((size) => {
        const run = drainOf(downstream, records, size);
        return run
          ? `${run.calls} (${(run.calls / records).toFixed(3)}/record; ${fixed(perCall(run))} per call; ${run.invocations} invocations)`
          : '—';
      });
      const best = Math.min(
        ...sizesOf(downstream).map((size) => drainOf(downstream, records, size)?.calls ?? Infinity),
      );
      callsRows.push([
        NAMES[downstream],
        thousands(records),
        today ? `${today.calls} (${(today.calls / records).toFixed(3)}/record)` : '—',
        ...cells,
        today ? ratio(best / today.calls) : '—',
      ]);
    }
  }
  const allSizes = [...new Set(downstreams.flatMap(sizesOf))].sort((a, b) => a - b);
  const callsTable = markdownTable(
    [
      'downstream',
      'backlog',
      'today: one call per record (a call of one)',
      ...allSizes.map(
        (size) =>
          `through the worker, batchSize ${size}${allSizes.length > 1 && size === result.deployed.sap.batchSize ? ' (deployed)' : ''}`,
      ),
      'fewest calls / today',
    ],
    callsRows,
  );

  // Worker time per record under the 1,000 backlog.
  const timeRows = downstreams.flatMap((downstream) => {
    const step = result.adapterSteps.find((s) => s.downstream === downstream);
    const oneByOne = (result.singleWorker ?? []).find((s) => s.downstream === downstream);
    const lines: string[][] = [];
    for (const size of sizesOf(downstream)) {
      const run = drainOf(downstream, 1000, size);
      lines.push([
        NAMES[downstream],
        `the worker, batchSize ${size}, ${run.pollers} at once (${run.calls} calls)`,
        `${((run.seconds * 1000) / run.records).toFixed(2)} ms`,
        us(run.cpuUsPerRecord),
      ]);
    }
    if (oneByOne)
      lines.push([
        NAMES[downstream],
        `baseline: the worker, one record per invocation, ${oneByOne.pollers} at once (${oneByOne.calls} calls)`,
        `${((oneByOne.seconds * 1000) / oneByOne.records).toFixed(2)} ms`,
        us(oneByOne.cpuUsPerRecord),
      ]);
    if (step) {
      lines.push([
        NAMES[downstream],
        `downstream step alone: the adapters' batched calls (${step.batched.calls} calls)`,
        `${((step.batched.seconds * 1000) / step.batched.records).toFixed(2)} ms`,
        us(step.batched.cpuUsPerRecord),
      ]);
      lines.push([
        NAMES[downstream],
        `baseline: a call of one per record, 10 at once (${step.single.calls} calls)`,
        `${((step.single.seconds * 1000) / step.single.records).toFixed(2)} ms`,
        us(step.single.cpuUsPerRecord),
      ]);
    }
    return lines;
  });
  const timeTable = markdownTable(
    [
      'downstream',
      '1,000 records through',
      'wall time per record',
      'CPU per record (worker process, full core)',
    ],
    timeRows,
  );

  const latencyTable = markdownTable(
    ['downstream', 'batching window', 'median send → delivered', 'samples (ms)'],
    result.latency.map((l) => [
      NAMES[l.downstream],
      `${l.windowSeconds} s`,
      `${l.medianMs.toFixed(0)} ms`,
      l.samplesMs.map((v) => v.toFixed(0)).join(', '),
    ]),
  );

  // Capacity within a share of the Salesforce allowance: today one call per case, after the calls measured.
  const budget = SALESFORCE_ALLOWANCE.callsPerDay * SALESFORCE_ALLOWANCE.share;
  const capacityRows: string[][] = [['today: one call per case', '1', thousands(budget), '1.00x']];
  for (const size of sizesOf('salesforce')) {
    for (const records of result.backlogs) {
      const run = drainOf('salesforce', records, size);
      if (!run) continue;
      const cases = perCall(run);
      capacityRows.push([
        `batched, batchSize ${size}: cases waiting ${thousands(records)} at a time`,
        fixed(cases),
        thousands(budget * cases),
        ratio(cases),
      ]);
    }
  }
  const capacityTable = markdownTable(
    [
      `within ${SALESFORCE_ALLOWANCE.share * 100} % of ${thousands(SALESFORCE_ALLOWANCE.callsPerDay)} Salesforce API calls a day (${thousands(budget)} calls)`,
      'cases per call (measured)',
      'cases per day',
      'against today',
    ],
    capacityRows,
  );

  const deployed = result.deployed;
  const notes = [
    `Through the worker: functions/deliveryWorker.ts fed by Lambda's event source as bench/eventSource.ts plays it with the local poller's \`pollOnce\` (batches of up to batchSize gathered over receives of 10 for at most the batching window; ${deployed.sap.maximumConcurrency} invocations at once, maximumConcurrency), the backlog queued before the first poll; deployed settings (serverless.yml): batchSize ${deployed.sap.batchSize}, maximumBatchingWindow ${deployed.sap.windowSeconds} s. The sandboxes (own process) count the delivery calls (\`GET /_sandbox/calls\`): SAP POSTs and \`$batch\` calls, Salesforce upserts and Collections calls; token and CSRF fetches are not delivery calls. Baseline: the same number of fresh records as calls of one record, 10 at once.`,
    `The worker measured ${result.workerBatched ? 'sends batched calls' : 'made one call per record (batched delivery was not in it)'}. A batch never spans invocations: records per call are at most the event source's batchSize (and ERP_BATCH_SIZE, 50 by default, for SAP; 200 for Salesforce Collections).`,
    'Lone record: one record accepted on an idle queue while the event source long-polls; from the send (status record and message written) to the sandbox holding it; the first sample of each setting warms the path and is dropped.',
    "Capacity: Salesforce counts every REST API call against the org's 24-hour allowance, shared with every other integration; the OAuth token requests are not API calls. Cases per call depend on how many wait at once: a steady trickle meets the window alone (the backlog-1 row), a campaign's burst or an outage's backlog fills whole calls.",
  ];
  return {
    rows,
    text: [
      'Downstream calls per record, by backlog (records waiting when the worker starts):',
      '',
      callsTable,
      '',
      "Worker time per record, backlog 1,000 (local sandboxes answer at once: the time is the worker's own and the round trips):",
      '',
      timeTable,
      '',
      'A lone record, with and without the batching window:',
      '',
      latencyTable,
      '',
      'Capacity within a share of the Salesforce allowance:',
      '',
      capacityTable,
      '',
      ...notes.map((n) => `- ${n}`),
    ].join('\n'),
  };
};
