/**
 * Which documented settings each function's code reads, found in the source: the files a function's entry point
 * imports (transitively), the settings each of them names (`env.NAME`, or `'NAME'` as the secrets and the adapters'
 * configuration name them), and for lib/settings/settings.ts the settings of each accessor the other files use.
 * tests/settings/passed.test.ts holds serverless.yml to it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importEdges } from './importGraph.ts';

const SETTINGS_MODULE = 'lib/settings/settings.ts';

/** Source without its comments: a setting named in a comment is not read. */
const code = (root: string, path: string): string =>
  readFileSync(join(root, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const namesIn = (text: string, names: readonly string[]): string[] =>
  names.filter((name) => new RegExp(`\\benv\\.${name}\\b|['"\`]${name}['"\`]`).test(text));

/** An accessor of a group of settings: each field and the setting it is read from (`field: parser('NAME', …)`). */
const fieldsOf = (block: string): Map<string, string> =>
  new Map([...block.matchAll(/(\w+): \w+\(\s*'([A-Z][A-Z0-9_]+)'/g)].map((m) => [m[2], m[1]]));

/** settings.ts: each exported accessor and the settings it reads, itself or through another accessor. */
const accessorsOf = (
  root: string,
  names: readonly string[],
): Map<string, { settings: Set<string>; fields: Map<string, string> }> => {
  const text = code(root, SETTINGS_MODULE);
  const blocks = text.split(/(?=^export const )/m).slice(1);
  const direct = new Map(
    blocks.map((block) => [
      /^export const (\w+)/.exec(block)?.[1] ?? '',
      { block, names: namesIn(block, names) },
    ]),
  );
  const read = new Map<string, Set<string>>();
  const resolve = (accessor: string, seen = new Set<string>()): Set<string> => {
    const known = read.get(accessor);
    if (known) return known;
    const entry = direct.get(accessor);
    const result = new Set(entry?.names ?? []);
    seen.add(accessor);
    for (const other of direct.keys()) {
      if (other !== accessor && !seen.has(other) && new RegExp(`\\b${other}\\b`).test(entry?.block ?? ''))
        for (const name of resolve(other, seen)) result.add(name);
    }
    read.set(accessor, result);
    return result;
  };
  for (const accessor of direct.keys()) resolve(accessor);
  return new Map(
    [...read].map(([accessor, settings]) => [
      accessor,
      { settings, fields: fieldsOf(direct.get(accessor)?.block ?? '') },
    ]),
  );
};

/**
 * The documented settings (`names`) the code reachable from `entry` reads.
 *
 * @example
 * settingsReadBy(root, 'functions/deliveryWorker.ts', ['ERP_BATCH_SIZE', 'PORT']) // Set { 'ERP_BATCH_SIZE' }
 */
export const settingsReadBy = (root: string, entry: string, names: readonly string[]): Set<string> => {
  const edges = importEdges(root);
  const reached = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const from = queue.shift() as string;
    for (const edge of edges)
      if (edge.from === from && !reached.has(edge.to)) {
        reached.add(edge.to);
        queue.push(edge.to);
      }
  }
  const accessors = accessorsOf(root, names);
  const texts = [...reached]
    .filter((path) => (path.startsWith('lib/') || path.startsWith('functions/')) && path !== SETTINGS_MODULE)
    .map((path) => code(root, path));
  const anywhere = (identifier: string) => texts.some((text) => new RegExp(`\\b${identifier}\\b`).test(text));
  const read = new Set(texts.flatMap((text) => namesIn(text, names)));
  if (reached.has(SETTINGS_MODULE)) {
    for (const [accessor, { settings, fields }] of accessors) {
      if (!anywhere(accessor)) continue;
      // A group's setting is read where its field is used too (`reconcileSettings().maxPerRun`, or the group handed
      // on and its field read there); a lone one wherever its accessor is.
      for (const name of settings) {
        const field = fields.get(name);
        if (!field || anywhere(field)) read.add(name);
      }
    }
  }
  return read;
};
