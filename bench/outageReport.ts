/**
 * The tables of the outage-drain benchmark (bench/outageDrain.ts): how long a backlog takes to drain after an SAP
 * outage ends, against the same backlog drained with no outage in the same run (the concurrency cap's own limit).
 */
import type { OutageDrainResult } from './outageDrain.ts';
import { markdownTable, type ResultRow, ratio, yesNo } from './table.ts';

const thousands = (value: number) => Math.round(value).toLocaleString('en-GB');
const s = (seconds: number | null) => (seconds === null ? '—' : `${seconds.toFixed(1)} s`);

export interface OutageReport {
  rows: ResultRow[];
  text: string;
}

export const outageReport = (result: OutageDrainResult, note?: string): OutageReport => {
  const rows: ResultRow[] = result.runs.map((run) => ({
    benchmark: `backlog of ${thousands(run.records)} sales: SAP up after an outage → every record delivered (the outage held them)`,
    ours: `${s(run.drainSeconds)} (hold closed after ${s(run.holdClosedAfterSeconds)}); failed ${run.failed}`,
    baseline: `${s(run.baselineSeconds)} (no outage: the concurrency cap's drain)`,
    ratio: ratio(run.drainSeconds / run.baselineSeconds),
    target: 'failed 0, each delivered once',
    met: yesNo(run.failed === 0 && run.delivered === run.records && run.inSandbox === run.records),
  }));
  const d = result.deployed;
  const table = markdownTable(
    [
      'backlog',
      'SAP down',
      'delivery calls while down (probes allowed)',
      'received while down (invocations)',
      'hold closed after SAP up',
      'half / 90 % / 99 % / all delivered after SAP up',
      'no outage: all delivered',
      'after / no outage',
      'queued again by the reconciler; received in the drain',
      'failed; delivered; in SAP',
    ],
    result.runs.map((run) => [
      thousands(run.records),
      s(run.outageSeconds),
      `${run.deliveryCallsWhileDown} (probes allowed ${run.probesAllowed}, each a batch of up to ${Math.ceil(d.batchSize / 50)} \`$batch\` calls; before them the ${result.settings.OUTAGE_AFTER_FAILURES.split(' ')[0]} failures that open the hold)`,
      `${thousands(run.receivedWhileDown)} (${run.invocationsWhileDown})`,
      s(run.holdClosedAfterSeconds),
      `${s(run.drainShares.half)} / ${s(run.drainShares.most)} / ${s(run.drainShares.nearlyAll)} / ${s(run.drainSeconds)}`,
      s(run.baselineSeconds),
      ratio(run.drainSeconds / run.baselineSeconds),
      `${thousands(run.requeued)}; ${run.receivedInDrain === undefined ? '—' : thousands(run.receivedInDrain)}`,
      `${run.failed}; ${thousands(run.delivered)}; ${thousands(run.inSandbox)}`,
    ]),
  );
  const settings = Object.entries(result.settings)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  const notes = [
    `Sales registrations to the SAP sandbox (own process), functions/deliveryWorker.ts through Lambda's event source as bench/eventSource.ts plays it with the local poller's \`pollOnce\` (no hold gate: it keeps receiving while SAP is held, as on AWS) at the deployed settings (batchSize ${d.batchSize}, maximumBatchingWindow ${d.windowSeconds} s, ${d.maximumConcurrency} invocations at once), the reconciler (lib/reconcile's scheduled run) beside it, fauxqs + dynalite in their own process. ` +
      `The outage: SAP switched down (\`POST /_sandbox/outage\`), the backlog accepted, SAP kept down until the hold was open, no message waited visible in the queue (each had met the hold) and at least the stated time had passed; then up. Baseline: the same number of records accepted with SAP up and drained by the same worker, event source and reconciler.`,
    `Settings: ${settings}. On AWS the probe period is OUTAGE_PROBE_SECONDS (default 30) and the reconciler runs every minute: the wait for the first probe after SAP is back, and any part of the drain the reconciler paces (RECONCILE_MAX_PER_RUN a run), stretch in proportion.`,
    ...(note ? [note] : []),
  ];
  return { rows, text: [table, '', ...notes.map((n) => `- ${n}`)].join('\n') };
};
