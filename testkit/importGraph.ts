/**
 * The project's import graph, read from the source: every relative `import … from`, `export … from`, `import()`
 * and `import '…'` of a TypeScript file, resolved to a project path. tests/layers/layers.test.ts checks the
 * top-level folders' floors against it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** An import of one project file by another (paths relative to the project root, `/`-separated). */
export interface ImportEdge {
  from: string;
  to: string;
}

const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\1/g;

const SKIPPED = new Set(['node_modules', '.git', '.data', '.esbuild', 'reports', 'coverage']);

const sourceFiles = (root: string, dir = ''): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory())
      return SKIPPED.has(entry.name) || entry.name.startsWith('.') ? [] : sourceFiles(root, path);
    return /\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });

/**
 * Every relative import of every TypeScript file under `root`.
 *
 * @example
 * importEdges(projectRoot).filter((e) => e.from.startsWith('bench/') && e.to.startsWith('tests/'))
 */
export const importEdges = (root: string): ImportEdge[] =>
  sourceFiles(root).flatMap((from) => {
    const text = readFileSync(join(root, from), 'utf8');
    return (
      [...text.matchAll(SPECIFIER)]
        .map((match) => ({
          from,
          to: relative(root, normalize(join(root, dirname(from), match[2])))
            .split('\\')
            .join('/'),
        }))
        // A specifier inside generated code (a template string) may point outside the project: not an import.
        .filter((edge) => !edge.to.startsWith('..'))
    );
  });

/** The top-level folder (or file) a project path belongs to: `lib/store/types.ts` → `lib`. */
export const layerOf = (path: string): string => path.split('/')[0];

/**
 * The edges whose target's layer the source's layer may not import (`allowed`: layer → layers it may import;
 * a layer always may import itself; a layer not listed may import anything).
 *
 * @example
 * againstTheGrain(edges, { bench: ['lib', 'testkit'] }) // bench → tests edges, …
 */
export const againstTheGrain = (
  edges: ImportEdge[],
  allowed: Record<string, readonly string[]>,
): ImportEdge[] =>
  edges.filter(({ from, to }) => {
    const source = layerOf(from);
    const rules = allowed[source];
    return rules !== undefined && layerOf(to) !== source && !rules.includes(layerOf(to));
  });
