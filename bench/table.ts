/** Markdown tables for the console and bench/RESULTS.md, and the number formats the benchmarks share. */

export interface ResultRow {
  benchmark: string;
  ours: string;
  baseline: string;
  ratio: string;
  target: string;
  /** `yes`, `NO`, or `—` when the row has no target. */
  met: string;
}

/** A markdown table with padded columns (readable as plain text too). */
export const markdownTable = (headers: string[], rows: string[][]): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
};

export const resultTable = (rows: ResultRow[]): string =>
  markdownTable(
    ['benchmark', 'ours', 'baseline', 'ratio', 'target', 'met'],
    rows.map((r) => [r.benchmark, r.ours, r.baseline, r.ratio, r.target, r.met]),
  );

export const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;
export const us = (value: number) => `${Math.round(value)} µs`;
export const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
/** Bytes below 10 KiB, else KiB. */
export const bytes = (value: number) => (value < 10 * 1024 ? `${Math.round(value)} B` : kib(value));
export const ratio = (value: number) => `${value.toFixed(2)}x`;
export const yesNo = (ok: boolean) => (ok ? 'yes' : 'NO');
/** Up to 3 decimals, no trailing zeros: 2, 0.15, 1.008. */
export const count = (value: number) => String(Number(value.toFixed(3)));

/** Standard error of the mean of per-block figures (0 for fewer than two). */
export const standardError = (values: number[]): number => {
  if (values.length < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1);
  return Math.sqrt(variance / values.length);
};
