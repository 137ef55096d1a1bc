/**
 * Every function whose code can make a span sends its spans before it returns (contract section 8: no span is lost
 * when a Lambda freezes): each entry point in functions/ that reaches, through its imports, a module of lib/ that
 * starts spans (`startSpan`, `inSpan`, `tracedFetch`, `requestSpan`) uses the traceFlush middleware (every function
 * reaches lib/observability/tracing.ts itself, through the logger, without making a span). The console API reached it through a redrive's event publishing and did not: its
 * spans went out only when the exporter's timer fired, so the roles test saw its X-Ray calls in one run of two.
 * Negative control: an entry point planted without traceFlush fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ImportEdge, importEdges } from '../../testkit/importGraph.ts';

const root = join(import.meta.dirname, '../..');
const TRACING = 'lib/observability/tracing.ts';
const SPAN_MAKING = /\b(startSpan|inSpan|tracedFetch|requestSpan)\(/;

/** Whether `from` reaches one of `targets` through the import edges. */
const reaches = (edges: readonly ImportEdge[], from: string, targets: ReadonlySet<string>): boolean => {
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift() as string;
    if (targets.has(at)) return true;
    for (const edge of edges)
      if (edge.from === at && !seen.has(edge.to)) {
        seen.add(edge.to);
        queue.push(edge.to);
      }
  }
  return false;
};

/** The modules of lib/ that make spans (the tracing module itself apart). */
const spanMakers = (edges: readonly ImportEdge[], sourceOf: (path: string) => string): Set<string> =>
  new Set(
    [...new Set(edges.map((edge) => edge.from))].filter(
      (path) => path.startsWith('lib/') && path !== TRACING && SPAN_MAKING.test(sourceOf(path)),
    ),
  );

/** The entry points that can make spans. */
const tracing = (edges: readonly ImportEdge[], sourceOf: (path: string) => string): string[] => {
  const makers = spanMakers(edges, sourceOf);
  return [...new Set(edges.map((edge) => edge.from))].filter(
    (path) => path.startsWith('functions/') && reaches(edges, path, makers),
  );
};

/** The entry points that can make spans but never flush them. */
const unflushed = (edges: readonly ImportEdge[], sourceOf: (path: string) => string): string[] =>
  tracing(edges, sourceOf)
    .filter((path) => !/\btraceFlush\(/.test(sourceOf(path)) && !/\bflushSpans\(/.test(sourceOf(path)))
    .sort();

describe('span flushing at every entry point', () => {
  it('every function that can end a span flushes its spans before it returns', () => {
    // Prepare
    const edges = importEdges(root);
    const sourceOf = (path: string) => readFileSync(join(root, path), 'utf8');
    // Act
    const missing = unflushed(edges, sourceOf);
    // Assess
    expect(missing).toEqual([]);
    // The check reaches the functions that trace (it is not vacuous).
    expect(tracing(edges, sourceOf)).toEqual(
      expect.arrayContaining([
        'functions/consoleApi.ts',
        'functions/deliveryWorker.ts',
        'functions/salesRegistration.ts',
      ]),
    );
  });

  it('negative control: an entry point without traceFlush is named', () => {
    // Prepare: the console API as it was, without the middleware.
    const edges = importEdges(root);
    const sourceOf = (path: string) => {
      const text = readFileSync(join(root, path), 'utf8');
      return path === 'functions/consoleApi.ts' ? text.replaceAll('traceFlush(', 'noFlush(') : text;
    };
    // Act / Assess
    expect(unflushed(edges, sourceOf)).toEqual(['functions/consoleApi.ts']);
  });
});
