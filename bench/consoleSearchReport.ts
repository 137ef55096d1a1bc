/**
 * The tables of the console search benchmark (bench/consoleSearch.ts): p50 / p95 of a search by frame number, by
 * record id and by SAP / Salesforce id under `npm start` with 100,000 records stored, against the contract's 300 ms.
 */
import type { ConsoleSearchFigures } from './consoleSearch.ts';
import { markdownTable, ms, type ResultRow, yesNo } from './table.ts';

/** The contract's p95 for a search by frame number or id (section 7, "Speed"). */
export const SEARCH_P95_TARGET_MS = 300;

export const consoleSearchTitle = 'Console search (npm start, 100,000 records)';

/**
 * Result rows (for the summary table) and the section's text.
 *
 * @example
 * const { rows, text } = consoleSearchReport(await measureConsoleSearch());
 */
export const consoleSearchReport = (figures: ConsoleSearchFigures): { rows: ResultRow[]; text: string } => {
  const records = figures.records.toLocaleString('en-GB');
  const searched: [string, { p50: number; p95: number }][] = [
    ['by frame number', figures.byFrame],
    ['by record id', figures.byId],
  ];
  const rows: ResultRow[] = searched.map(([what, { p50, p95 }]) => ({
    benchmark: `console search ${what}, npm start with ${records} records: p95 (p50)`,
    ours: `${ms(p95)} (${ms(p50)})`,
    baseline: '—',
    ratio: '—',
    target: `≤ ${SEARCH_P95_TARGET_MS} ms`,
    met: yesNo(p95 <= SEARCH_P95_TARGET_MS),
  }));
  const table = markdownTable(
    ['request', 'p50', 'p95', 'target (p95)'],
    [
      ...searched.map(([what, { p50, p95 }]) => [
        `search ${what}`,
        ms(p50),
        ms(p95),
        `≤ ${SEARCH_P95_TARGET_MS} ms`,
      ]),
      ['search by SAP / Salesforce id', ms(figures.byDownstreamId.p50), ms(figures.byDownstreamId.p95), '—'],
      ['first page of all records (no filter)', ms(figures.firstPage.p50), ms(figures.firstPage.p95), '—'],
    ],
  );
  const notes =
    `${records} settled records (7 in 10 sales, the rest cases; delivered, rejected and failed; live and test clients; accepted over 90 days), ` +
    `written into npm start's own store while it was stopped (lib/store/statusRecords.ts toItem, BatchWriteItem, 500 at a time: ${figures.seedSeconds.toFixed(0)} s), then npm start again. ` +
    `${figures.searches} sequential searches of each kind over HTTP (\`GET /console/api/records?q=\`, a support user's bearer ID token from the local provider), ` +
    'after 10 to warm the handler, each for a record spread over the table and found in the answer. The first page (20 requests) is the listing newest first over the 8 `status` index partitions.';
  return { rows, text: `${table}\n\n${notes}` };
};
