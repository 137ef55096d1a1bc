import type { HistoryEntry, RecordStatus, StatusRecord } from '../../lib/records/types.ts';
import { withoutPersonalData } from '../../lib/retention/personalFields.ts';
import type { StatusIndexEntry } from '../../lib/store/statusIndex.ts';
import type { RecordKind } from '../../lib/types.ts';
import { DETAIL_WIDTH, KIND_LABELS, MASK } from './constants.ts';
import type { CountedHolds } from './holds.ts';
import type { RecordRow } from './types.ts';

/**
 * A listing's row from what the `status` index (or a whole record) holds: the owner as `client`, the frame number
 * out of `frameKey`.
 *
 * @example
 * rowOf({ id: 'a1', kind: 'salesRegistration', status: 'failed', owner: 'example-dealer', frameKey: 'example-dealer#F1', ... }).frameNum // 'F1'
 */
export const rowOf = (entry: StatusIndexEntry): RecordRow => {
  const frameNum = entry.frameKey?.slice(entry.frameKey.indexOf('#') + 1);
  return {
    id: entry.id,
    kind: entry.kind,
    status: entry.status,
    client: entry.owner,
    ...(entry.dealer === undefined ? {} : { dealer: entry.dealer }),
    ...(frameNum === undefined ? {} : { frameNum }),
    attempts: entry.attempts,
    acceptedAt: entry.acceptedAt,
    updatedAt: entry.updatedAt,
    ...(entry.downstreamId === undefined ? {} : { downstreamId: entry.downstreamId }),
    ...(entry.error === undefined ? {} : { error: entry.error }),
  };
};

/** An ISO time to the second, for people: `2026-11-22 08:00:00`. UTC, as stored. */
const shortTime = (iso: string | undefined): string => (iso ? iso.slice(0, 19).replace('T', ' ') : '');

const cut = (text: string, width: number): string =>
  text.length <= width ? text : `${text.slice(0, width - 1)}…`;

/**
 * Lays out rows of cells in columns as wide as their widest cell, two spaces apart; the last column is not padded.
 *
 * @example
 * alignColumns([['KIND', 'TOTAL'], ['sales', '2']]) // 'KIND   TOTAL\nsales  2'
 */
export const alignColumns = (rows: string[][]): string => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

/**
 * The table of a listing, for people: aligned columns, times in UTC to the second, the downstream id or the error
 * cut to {@link DETAIL_WIDTH} characters.
 *
 * @example
 * console.log(recordsTable(rows));
 */
export const recordsTable = (rows: RecordRow[]): string => {
  if (rows.length === 0) return 'no records';
  const header = [
    'ID',
    'KIND',
    'STATUS',
    'CLIENT',
    'DEALER',
    'FRAME',
    'ATTEMPTS',
    'ACCEPTED (UTC)',
    'UPDATED (UTC)',
    'DOWNSTREAM ID / ERROR',
  ];
  const cells = rows.map((row) => [
    row.id,
    KIND_LABELS[row.kind] ?? row.kind,
    row.status,
    row.client,
    row.dealer === undefined ? '' : String(row.dealer),
    row.frameNum ?? '',
    String(row.attempts),
    shortTime(row.acceptedAt),
    shortTime(row.updatedAt),
    cut((row.downstreamId ?? row.error ?? '').replace(/\s+/g, ' '), DETAIL_WIDTH),
  ]);
  return `${alignColumns([header, ...cells])}\n${rows.length} record(s)`;
};

/** Counts by state per kind, as `--counts` gives them. */
export type StateCounts = Partial<Record<RecordKind, Partial<Record<RecordStatus, number>>>>;

/**
 * The table of `--counts`: a line per kind, a column per state counted, and the total.
 *
 * @example
 * countsTable({ caseRecord: { accepted: 1, failed: 2 } }, ['accepted', 'failed'])
 * // KIND   ACCEPTED  FAILED  TOTAL
 * // cases  1         2       3
 */
export const countsTable = (counts: StateCounts, statuses: RecordStatus[]): string => {
  const header = ['KIND', ...statuses.map((status) => status.toUpperCase()), 'TOTAL'];
  const lines = Object.entries(counts).map(([kind, byState]) => {
    const numbers = statuses.map((status) => byState?.[status] ?? 0);
    return [
      KIND_LABELS[kind as RecordKind] ?? kind,
      ...numbers.map(String),
      String(numbers.reduce((a, b) => a + b, 0)),
    ];
  });
  return alignColumns([header, ...lines]);
};

/**
 * The holds under `--counts`, for people: a line per downstream counted, whether it is held, why (`outage`, or
 * `api-usage`: Salesforce's allowance), since when and when the next probe may go (UTC, to the second).
 *
 * @example
 * holdsTable({ erp: { held: true, reason: 'outage', heldSince: '2026-11-27T03:00:00.000Z', nextProbeAt: '2026-11-27T03:00:30.000Z' } })
 * // DOWNSTREAM  HELD  REASON  SINCE (UTC)          NEXT PROBE (UTC)
 * // erp         yes   outage  2026-11-27 03:00:00  2026-11-27 03:00:30
 */
export const holdsTable = (holds: CountedHolds): string =>
  alignColumns([
    ['DOWNSTREAM', 'HELD', 'REASON', 'SINCE (UTC)', 'NEXT PROBE (UTC)'],
    ...Object.entries(holds).map(([downstream, hold]) => [
      downstream,
      hold?.held ? 'yes' : 'no',
      hold?.held ? (hold.reason ?? '') : '',
      hold?.held ? shortTime(hold.heldSince) : '',
      hold?.held ? shortTime(hold.nextProbeAt) : '',
    ]),
  ]);

/**
 * The record as stored, with every value of `record` that is personal data (every field not kept once personal
 * data is removed: lib/retention/personalFields.ts) replaced by {@link MASK}.
 *
 * @example
 * masked(status).record // { DealerId: 1234, FrameNum: 'F1', Name: '***', email: '***', ... }
 */
export const masked = (status: StatusRecord): StatusRecord => {
  if (!status.record) return status;
  const kept = withoutPersonalData(status.kind, status.record) as Record<string, unknown>;
  const record = Object.fromEntries(
    Object.entries(status.record).map(([field, value]) => [field, field in kept ? value : MASK]),
  );
  return { ...status, record: record as unknown as StatusRecord['record'] };
};

const historyTable = (history: HistoryEntry[]): string =>
  alignColumns([
    ['AT (UTC)', 'STATUS', 'REACHED', 'DOWNSTREAM ID / ERROR'],
    ...history.map((step) => [
      shortTime(step.at),
      step.redriven ? `${step.status} (redriven)` : step.status,
      step.reached ? 'yes' : 'no',
      (step.downstreamId ?? step.error ?? '').replace(/\s+/g, ' '),
    ]),
  ]);

const valueText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * One record in full, for people: every stored field, then `record` field by field, then its history of attempts
 * and errors (oldest first). Pass it {@link masked} unless personal data is to be shown.
 *
 * @example
 * console.log(recordView(masked(status)));
 */
export const recordView = (status: StatusRecord): string => {
  const { record, history, ...fields } = status;
  const lines = alignColumns(Object.entries(fields).map(([name, value]) => [`${name}:`, valueText(value)]));
  const recordLines = record
    ? alignColumns(Object.entries(record).map(([name, value]) => [`  ${name}:`, valueText(value)]))
    : '  (none)';
  const historyLines =
    history && history.length > 0
      ? historyTable(history)
          .split('\n')
          .map((line) => `  ${line}`)
          .join('\n')
      : '  (no attempt yet)';
  return `${lines}\nrecord:\n${recordLines}\nhistory:\n${historyLines}`;
};
