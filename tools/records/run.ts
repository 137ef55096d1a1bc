import { keptSpansOfTrace } from '../../lib/observability/keptSpans.ts';
import { traceIdOf } from '../../lib/observability/traceContext.ts';
import { OPERATOR_ATTRIBUTES } from '../../lib/store/operatorAttributes.ts';
import { readStatusRecord } from '../../lib/store/statusIndex.ts';
import { defaultDataDir } from '../../local/project.ts';
import { tracesFile } from '../../local/traceReceiver.ts';
import { parseRecordsArgs } from './args.ts';
import { USAGE } from './constants.ts';
import { NoServiceError, RecordNotFoundError, UsageError } from './errors.ts';
import { countsTable, holdsTable, masked, recordsTable, recordView } from './format.ts';
import { countedHolds } from './holds.ts';
import { isConfigured, unconfiguredNote, unknownClient } from './knownClients.ts';
import { countRecords, listRecords } from './list.ts';
import { awsSource, localSource, type RecordsSource } from './source.ts';
import { waterfall } from './trace.ts';
import type { RecordRow, RecordsOptions } from './types.ts';

/** Where the script writes: stdout for results, stderr for messages and the progress line. */
export interface RecordsOutput {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal: the progress line is shown there by default. */
  errIsTerminal: boolean;
}

/** A connection refused or reset: the local service named by runner.json is gone (a stale file). */
const unreachable = (error: unknown): boolean => {
  const text = `${(error as Error)?.message} ${String((error as { cause?: { code?: string } })?.cause?.code)}`;
  return /ECONNREFUSED|ECONNRESET|fetch failed/.test(text);
};

const progressLine = (output: RecordsOutput, shown: boolean) => {
  if (!shown) return { update: (_count: number) => {}, done: () => {} };
  // On a terminal one line rewritten in place; elsewhere (--progress into a file) a line each update.
  const end = output.errIsTerminal ? '\r' : '\n';
  return {
    update: (count: number) => output.err(`listed ${count} record(s)...${end}`),
    done: () => {
      if (output.errIsTerminal) output.err('\x1b[2K\r');
    },
  };
};

/**
 * A --client the configuration does not name: refused when nothing of it was found (tools/records/knownClients.ts),
 * else its records are shown with a note.
 */
const checkClient = (options: RecordsOptions, found: number, output: RecordsOutput) => {
  if (options.client === undefined || isConfigured(options.client)) return;
  if (found === 0) throw unknownClient(options.client);
  output.err(unconfiguredNote(options.client));
};

const list = async (options: RecordsOptions, source: RecordsSource, output: RecordsOutput) => {
  const progress = progressLine(output, options.progress || output.errIsTerminal);
  const rows: RecordRow[] = [];
  let count = 0;
  try {
    for await (const page of listRecords(options, source.reader)) {
      count += page.length;
      // NDJSON as the pages come, so that a long listing streams; the table waits for every row (its widths).
      if (options.json) output.out(page.map((row) => `${JSON.stringify(row)}\n`).join(''));
      else rows.push(...page);
      progress.update(count);
    }
  } finally {
    progress.done();
  }
  checkClient(options, count, output);
  if (!options.json) output.out(`${recordsTable(rows)}\n`);
};

const counts = async (options: RecordsOptions, source: RecordsSource, output: RecordsOutput) => {
  const result = await countRecords(options, source.reader);
  const total = Object.values(result).flatMap((byState) => Object.values(byState ?? {}));
  checkClient(
    options,
    total.reduce((a, b) => a + (b ?? 0), 0),
    output,
  );
  const holds = await countedHolds(options, source.reader);
  output.out(
    options.json
      ? `${JSON.stringify({ ...result, holds })}\n`
      : `${countsTable(result, options.statuses)}\n\n${holdsTable(holds)}\n`,
  );
};

const one = async (options: RecordsOptions, source: RecordsSource, output: RecordsOutput) => {
  const id = options.id as string;
  // On AWS only what OperationsRole may read (no `record`); locally the whole record, masked unless asked.
  const status = await readStatusRecord(id, {
    reader: source.reader,
    ...(options.stage === undefined ? {} : { attributes: OPERATOR_ATTRIBUTES }),
  });
  if (!status) throw new RecordNotFoundError(`no record ${id} in ${source.where}`);
  const shown = options.showPersonal ? status : masked(status);
  output.out(options.json ? `${JSON.stringify(shown)}\n` : `${recordView(shown)}\n`);
};

const trace = async (
  options: RecordsOptions,
  source: RecordsSource,
  output: RecordsOutput,
  env: NodeJS.ProcessEnv,
) => {
  const id = options.trace as string;
  // A record id names its trace (the traceparent its status record keeps); anything else is taken as a trace id.
  const status = await readStatusRecord(id, { reader: source.reader }).catch(() => undefined);
  const traceId = traceIdOf(status?.traceparent) ?? id.toLowerCase();
  const file = tracesFile(env.DATA_DIR ? env.DATA_DIR : defaultDataDir());
  const entries = await keptSpansOfTrace(file, traceId);
  if (entries.length === 0) throw new RecordNotFoundError(`no spans of trace ${traceId} in ${file}`);
  if (options.json) {
    output.out(entries.map(({ span }) => `${JSON.stringify(span)}\n`).join(''));
    return;
  }
  const about = status ? ` (record ${status.id}, ${status.status})` : '';
  output.out(`trace ${traceId}${about}\n${waterfall(entries)}\n`);
};

/**
 * `npm run records`: parses the arguments, reads the running `npm start` or an AWS stage, writes the listing, the
 * counts or one record. Never throws.
 *
 * @returns the exit code: 0, 1 (nothing to read from, no such record, a failed read), 2 (bad arguments).
 * @example
 * process.exitCode = await runRecords(process.argv.slice(2), process.env, output);
 */
export const runRecords = async (
  argv: string[],
  env: NodeJS.ProcessEnv,
  output: RecordsOutput,
): Promise<number> => {
  let source: RecordsSource | undefined;
  try {
    const options = parseRecordsArgs(argv, env);
    if (options.help) {
      output.out(`${USAGE}\n`);
      return 0;
    }
    source = options.stage === undefined ? await localSource(env) : awsSource(options.stage, options.region);
    const act = { list, counts, one, trace }[options.mode];
    try {
      await act(options, source, output, env);
    } catch (error) {
      if ((error as Error)?.name === 'ResourceNotFoundException')
        throw new NoServiceError(`${source.where}: no such table (or index): check --stage and --region`);
      if (options.stage === undefined && unreachable(error))
        throw new NoServiceError(`${source.where} does not answer: start it with npm start`);
      throw error;
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`npm run records: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof NoServiceError || error instanceof RecordNotFoundError) {
      output.err(`npm run records: ${error.message}\n`);
      return 1;
    }
    output.err(`npm run records: ${(error as Error)?.name}: ${(error as Error)?.message}\n`);
    return 1;
  } finally {
    source?.close();
  }
};
