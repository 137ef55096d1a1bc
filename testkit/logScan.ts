import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One personal value found in captured output. */
export interface Leak {
  /** The value found (a test fixture, never real data). */
  value: string;
  /** The capture file and line where it was found. */
  file: string;
  line: number;
}

/**
 * Finds the given personal values in text, case-insensitively (a value upper-cased on its way to a log is
 * still a leak). Reports each value once per file, at its first line.
 *
 * @example
 * findLeaksInText('{"message":"x","name":"Alexandra"}\n', ['Alexandra'], 'w1.log') // [{ value: 'Alexandra', file: 'w1.log', line: 1 }]
 */
export const findLeaksInText = (text: string, values: readonly string[], file: string): Leak[] => {
  const haystack = text.toLowerCase();
  const leaks: Leak[] = [];
  for (const value of new Set(values)) {
    if (!value) continue;
    const at = haystack.indexOf(value.toLowerCase());
    if (at < 0) continue;
    let line = 1;
    for (let i = haystack.indexOf('\n'); i >= 0 && i < at; i = haystack.indexOf('\n', i + 1)) line++;
    leaks.push({ value, file, line });
  }
  return leaks;
};

/** Finds the given personal values in every capture file of a directory. */
export const findLeaksInDirectory = (directory: string, values: readonly string[]): Leak[] =>
  readdirSync(directory)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .flatMap((name) => findLeaksInText(readFileSync(join(directory, name), 'utf8'), values, name));

/** One line per leak, for the error that fails the run. */
export const describeLeaks = (directory: string, leaks: Leak[]): string =>
  [
    `personal data appeared in the output of the tests (capture files kept in ${directory}):`,
    ...leaks.map((leak) => `  "${leak.value}" in ${leak.file}, line ${leak.line}`),
  ].join('\n');
