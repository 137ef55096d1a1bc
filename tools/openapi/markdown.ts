/**
 * The document's prose lives in Markdown files beside this module (`description.md` for the API,
 * `operations/<operationId>.md` for an operation), so that it reads and diffs as Markdown. Each paragraph is
 * one line: a line break in a file is a line break in the document.
 */
import { readFileSync } from 'node:fs';

/**
 * The text of a Markdown file under `tools/openapi/`, without its final newline, each `{{name}}` replaced by
 * `values[name]`. A placeholder without a value, or a value without a placeholder, is a bug and throws.
 *
 * @example
 * markdown('operations/getStatus.md', { record: 'case' }) // 'Where an accepted case stands. …'
 */
export const markdown = (file: string, values: Record<string, string> = {}): string => {
  const text = readFileSync(new URL(file, import.meta.url), 'utf8').replace(/\n$/, '');
  const unused = new Set(Object.keys(values));
  const filled = text.replace(/\{\{(\w+)\}\}/g, (_placeholder, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`${file}: no value for {{${name}}}`);
    unused.delete(name);
    return values[name];
  });
  if (unused.size > 0) throw new Error(`${file}: no placeholder for ${[...unused].join(', ')}`);
  return filled;
};
