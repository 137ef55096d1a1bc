/**
 * The house's floors (the README's map): each top-level folder imports only the folders below it; bench and soak
 * never import tests/, and the local runner reaches the functions through their handlers as serverless.yml names
 * them. Read from the source, so a move that breaks a floor fails here; the planted case shows the check fails
 * when it should. The floors inside lib/ (the store on the record, no circle) are tests/layers/imports.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
import { againstTheGrain, importEdges } from '../../testkit/importGraph.ts';

/** Each layer and the layers it may import (bottom to top); tests/ may import any of them. */
const LAYERS: Record<string, readonly string[]> = {
  lib: ['schemas', 'config'],
  functions: ['lib', 'schemas', 'openapi.json'],
  sandbox: ['lib'],
  local: ['lib', 'sandbox', 'schemas', 'node_modules'],
  testkit: ['lib', 'local', 'sandbox', 'functions', 'schemas'],
  soak: ['lib', 'local', 'sandbox', 'testkit', 'schemas'],
  tools: ['lib', 'local', 'schemas', 'package.json'],
  bench: ['lib', 'functions', 'local', 'sandbox', 'testkit', 'soak', 'tools', 'schemas'],
  scripts: ['lib', 'local', 'sandbox', 'soak', 'tools', 'schemas', 'package.json'],
};

const edges = importEdges(projectRoot);

describe('the layers', () => {
  it('has every layer import only the layers below it (bench and soak never import tests/)', () => {
    // Assess
    expect(edges.length).toBeGreaterThan(1000);
    expect(againstTheGrain(edges, LAYERS)).toEqual([]);
  });

  it('finds a planted import against the grain', () => {
    // Prepare
    const planted = [
      { from: 'bench/run.ts', to: 'lib/store/types.ts' },
      { from: 'bench/run.ts', to: 'tests/layers/layers.test.ts' },
    ];
    // Act
    const found = againstTheGrain(planted, LAYERS);
    // Assess
    expect(found).toEqual([{ from: 'bench/run.ts', to: 'tests/layers/layers.test.ts' }]);
  });

  it('runs the worker locally through its handler entry, not by importing functions/', () => {
    expect(
      edges.filter((edge) => edge.from.startsWith('local/') && edge.to.startsWith('functions/')),
    ).toEqual([]);
  });
});
