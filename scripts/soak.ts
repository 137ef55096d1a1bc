/**
 * `npm run soak`: the fault campaign (soak/campaign.ts). Thousands of records through `npm start`
 * with faults at every boundary and SIGKILLs of the whole service, then a record-by-record reconciliation of
 * what was answered, what SAP and Salesforce received and what the status look-ups say.
 *
 * Prints the table, then one JSON line (`{"soak": {...}}`), on stdout; progress on stderr. Exits 0 when the
 * promise held, 1 on any lost, duplicated, stuck, leaked or inconsistent record or contract violation, or any
 * state-change event lost, leaked to a client without a webhook or carrying personal data, any record sent
 * during the SAP outage `failed`, more calls reaching SAP while it was down than the probes allowed, a first
 * delivery after SAP came back later than one probe period, one reconciler period, the worker's batching
 * window and the probe's own call, or any hold opened while
 * its downstream answered; 2 when the campaign itself could not run.
 *
 *   npm run soak                          # 5,000 records, 3 restarts
 *   npm run soak -- --records 500 --restarts 1 --seed 42
 *
 * Options: --records N, --flood N (of them, cases the flooding client sends first; default a quarter),
 * --restarts N, --concurrency N, --seed N, --max-tries N, --outage-seconds N (SAP down
 * this long, default 90; 0: none), --probe-seconds N (OUTAGE_PROBE_SECONDS, default 2),
 * --drain-seconds N, --stall-seconds N, --max-traffic-seconds N, --reconcile-after-seconds N (default 12),
 * --reconcile-interval-seconds N (RECONCILE_INTERVAL_SECONDS, default 2),
 * --events-wait-seconds N (a stall of the events: none of the missing arrived for N s), --service-log-level
 * LEVEL, --keep-data.
 */
import { parseArgs } from 'node:util';
import { runSoak, type SoakOptions } from '../soak/campaign.ts';
import { reportJson, reportTable } from '../soak/report.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string' },
    flood: { type: 'string' },
    restarts: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    'max-tries': { type: 'string' },
    'outage-seconds': { type: 'string' },
    'probe-seconds': { type: 'string' },
    'drain-seconds': { type: 'string' },
    'stall-seconds': { type: 'string' },
    'max-traffic-seconds': { type: 'string' },
    'reconcile-after-seconds': { type: 'string' },
    'reconcile-interval-seconds': { type: 'string' },
    'events-wait-seconds': { type: 'string' },
    'service-log-level': { type: 'string' },
    'keep-data': { type: 'boolean' },
    help: { type: 'boolean' },
  },
});

if (values.help) {
  process.stdout.write(
    'npm run soak -- [--records N] [--flood N] [--restarts N] [--concurrency N] [--seed N] [--max-tries N]\n' +
      '  [--outage-seconds N] [--probe-seconds N] [--drain-seconds N] [--stall-seconds N] [--max-traffic-seconds N]\n' +
      '  [--reconcile-after-seconds N] [--reconcile-interval-seconds N] [--events-wait-seconds N]\n' +
      '  [--service-log-level LEVEL] [--keep-data]\n',
  );
  process.exit(0);
}

const whole = (name: string, value: string | undefined, min: number, max: number): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    process.stderr.write(`--${name} must be a whole number from ${min} to ${max}\n`);
    process.exit(2);
  }
  return parsed;
};

const options: SoakOptions = {
  records: whole('records', values.records, 1, 100_000),
  flood: whole('flood', values.flood, 0, 100_000),
  restarts: whole('restarts', values.restarts, 0, 20),
  concurrency: whole('concurrency', values.concurrency, 1, 64),
  seed: whole('seed', values.seed, 0, 2 ** 31 - 1),
  maxTries: whole('max-tries', values['max-tries'], 1, 20),
  outageSeconds: whole('outage-seconds', values['outage-seconds'], 0, 3_600),
  probeSeconds: whole('probe-seconds', values['probe-seconds'], 1, 600),
  drainSeconds: whole('drain-seconds', values['drain-seconds'], 1, 3_600),
  stallSeconds: whole('stall-seconds', values['stall-seconds'], 1, 3_600),
  maxTrafficSeconds: whole('max-traffic-seconds', values['max-traffic-seconds'], 1, 24 * 3_600),
  reconcileAfterSeconds: whole('reconcile-after-seconds', values['reconcile-after-seconds'], 1, 3_600),
  reconcileIntervalSeconds: whole(
    'reconcile-interval-seconds',
    values['reconcile-interval-seconds'],
    1,
    3_600,
  ),
  eventsWaitSeconds: whole('events-wait-seconds', values['events-wait-seconds'], 0, 3_600),
  serviceLogLevel: values['service-log-level'],
  keepDataDir: values['keep-data'],
};

// Ctrl-C: stop npm start and the sandboxes (runSoak's clean-up) before leaving.
const abort = new AbortController();
process.once('SIGINT', () => abort.abort());
process.once('SIGTERM', () => abort.abort());

try {
  const report = await runSoak({ ...options, signal: abort.signal });
  process.stdout.write(`${reportTable(report)}\n${reportJson(report)}\n`);
  process.exit(report.ok ? 0 : 1);
} catch (error) {
  process.stderr.write(
    `soak could not run: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(2);
}
