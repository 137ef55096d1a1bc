/**
 * The house's floors: no import circle between any two files of the project; lib/ has none between its modules
 * (directories) either; the store
 * stands on the record, the AWS clients and the settings only; and only the settings module (with the AWS clients
 * and Powertools' own variables) reads the process's environment. Read from the source files themselves.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importEdges } from '../../testkit/importGraph.ts';

const LIB = resolve(import.meta.dirname, '../../lib');

/** Every TypeScript source of a directory, at any depth (generated validators included: they import too). */
const sourcesOf = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesOf(path);
    return /\.(ts|cts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.cts') ? [path] : [];
  });

/** Each lib file with the lib files it imports (static, type-only and dynamic imports alike). */
const importGraph = (files: string[]): Map<string, string[]> => {
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(/(?:from|import\()\s*['"](\.[^'"]+)['"]/g)]
        .map((match) => resolve(dirname(file), match[1]))
        .filter((target) => known.has(target));
      return [file, [...new Set(targets)]];
    }),
  );
};

/** The circles of a graph, each as the path that closes it. */
const circlesOf = (graph: Map<string, string[]>): string[][] => {
  const circles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return circles;
};

const moduleOf = (file: string): string => relative(LIB, dirname(file)).split('/')[0] || '.';

/** The graph of lib's modules: a module imports another when one of its files imports one of the other's. */
const moduleGraph = (graph: Map<string, string[]>): Map<string, string[]> => {
  const modules = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = moduleOf(file);
    if (!modules.has(from)) modules.set(from, new Set());
    for (const target of targets) if (moduleOf(target) !== from) modules.get(from)?.add(moduleOf(target));
  }
  return new Map([...modules].map(([name, targets]) => [name, [...targets]]));
};

const files = sourcesOf(LIB);
const graph = importGraph(files);
const named = (circle: string[]) => circle.map((file) => relative(LIB, file)).join(' -> ');

describe('lib imports', () => {
  it('have no circle between files', () => {
    expect(circlesOf(graph).map(named)).toEqual([]);
  });

  it('have no circle between modules', () => {
    expect(circlesOf(moduleGraph(graph)).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('let the store stand on the record, the AWS clients, the settings and the domain types only', () => {
    const storeImports = new Set(
      [...graph]
        .filter(([file]) => moduleOf(file) === 'store')
        .flatMap(([, targets]) => targets.map((target) => relative(LIB, target)))
        .filter((target) => !target.startsWith('store/'))
        .map((target) => (target.includes('/') ? target.split('/')[0] : target)),
    );
    expect([...storeImports].sort()).toEqual(['aws', 'records', 'settings', 'types.ts']);
  });

  it('read the environment only in lib/settings, besides the AWS clients and Powertools (their own variables)', () => {
    const readers = files
      .filter((file) => readFileSync(file, 'utf8').includes('process.env'))
      .map((file) => relative(LIB, file))
      .sort();
    expect(readers).toEqual([
      'aws/clients.ts',
      'aws/jsonProtocol/client.ts',
      'observability/logger.ts',
      'observability/metrics.ts',
      'settings/environment.ts',
    ]);
  });
});

describe('the whole house’s imports', () => {
  const root = resolve(import.meta.dirname, '../..');
  /** The project's import graph (every folder: lib, sandbox, local, testkit, soak, tools, tests, bench, scripts). */
  const houseGraph = (edges: { from: string; to: string }[]): Map<string, string[]> => {
    const graph = new Map<string, string[]>();
    for (const { from, to } of edges) graph.set(from, [...(graph.get(from) ?? []), to]);
    return graph;
  };

  it('have no circle between files', () => {
    // Act
    const edges = importEdges(root);
    // Assess
    expect([...new Set(edges.map(({ from }) => from.split('/')[0]))]).toEqual(
      expect.arrayContaining([
        'lib',
        'functions',
        'sandbox',
        'local',
        'testkit',
        'soak',
        'tools',
        'tests',
        'bench',
        'scripts',
      ]),
    );
    expect(circlesOf(houseGraph(edges)).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('finds a circle planted between two sandbox files', () => {
    // Prepare
    const edges = [
      ...importEdges(root),
      { from: 'sandbox/salesforceTypes.ts', to: 'sandbox/salesforceSandbox.ts' },
    ];
    // Act
    const circles = circlesOf(houseGraph(edges)).map((circle) => circle.join(' -> '));
    // Assess
    expect(
      circles.some((circle) => circle.includes('sandbox/salesforceTypes.ts -> sandbox/salesforceSandbox.ts')),
    ).toBe(true);
  });
});
