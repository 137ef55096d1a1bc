/**
 * Every setting docs/operations.md lists reaches each deployed function that reads it, and none is passed to a
 * function that never reads it: the packaged template's environment per function against the settings its code
 * reads (testkit/settingsReaders.ts). A secret is passed as `<NAME>_PARAMETER` (lib/delivery/secrets.ts).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';
import { settingsReadBy } from '../../testkit/settingsReaders.ts';

const root = process.cwd();

/** The configuration table's settings, but those it marks local only or deploy only. */
const documentedSettings = (): string[] => {
  const guide = readFileSync(`${root}/docs/operations.md`, 'utf8');
  const table = guide.slice(guide.indexOf('## Configuration'));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `') && !/\| (local only|deploy only)|never on AWS/.test(line))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
};

/** Each function's entry file and the names its environment passes (a `_PARAMETER` counts for its setting). */
const deployedFunctions = (template: Template) =>
  Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Handler)
    .map(([logicalId, resource]) => {
      const handler = String(resource.Properties.Handler);
      const variables = Object.keys(
        (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
          {},
      );
      return {
        logicalId,
        entry: `${handler.slice(0, handler.lastIndexOf('.'))}.ts`,
        passed: new Set(variables.map((name) => name.replace(/_PARAMETER$/, ''))),
      };
    });

/**
 * The two delivery functions run one handler, each for its own queue's kind: each reads its own downstream's
 * settings only (lib/delivery/downstreams.ts builds the one its records go to).
 */
const otherDownstream = (logicalId: string, name: string): boolean =>
  (/^ErpDelivery/.test(logicalId) && /^CRM_(?!API_USAGE_SHARE)/.test(name)) ||
  (/^CrmDelivery/.test(logicalId) && /^ERP_/.test(name));

/**
 * The settings a function reads that its environment lacks, and those it is given but never reads. What every
 * function is given (the provider's environment, shared on purpose) is not counted as given without need.
 */
const mismatches = (
  functions: ReturnType<typeof deployedFunctions>,
  documented: readonly string[],
  readersOf: (entry: string) => Set<string>,
) => {
  const shared = documented.filter((name) => functions.every(({ passed }) => passed.has(name)));
  return functions.flatMap(({ logicalId, entry, passed }) => {
    const read = new Set([...readersOf(entry)].filter((name) => !otherDownstream(logicalId, name)));
    return [
      ...[...read]
        .filter((name) => !passed.has(name))
        .map((name) => `${logicalId} reads ${name}, not passed`),
      ...documented
        .filter((name) => passed.has(name) && !read.has(name) && !shared.includes(name))
        .map((name) => `${logicalId} is passed ${name}, never read`),
    ];
  });
};

let template: Template;
beforeAll(async () => {
  ({ template } = await packagedTemplate());
}, 600_000);

describe('documented settings and the deployed functions', () => {
  it('passes every documented setting to each function that reads it, and to no other', () => {
    // Prepare
    const documented = documentedSettings();
    const functions = deployedFunctions(template);
    // Act
    const found = mismatches(functions, documented, (entry) => settingsReadBy(root, entry, documented));
    // Assess
    expect(documented).toContain('ERP_BATCH_SIZE');
    expect(functions.length).toBeGreaterThanOrEqual(9);
    expect(found).toEqual([]);
  });

  it('finds a documented setting a function reads but is not passed, and one passed but never read (control)', () => {
    // Prepare: the workers' environment without ERP_BATCH_SIZE; the reconciler given it.
    const documented = documentedSettings();
    const functions = deployedFunctions(template).map((fn) => {
      const passed = new Set(fn.passed);
      if (fn.entry === 'functions/deliveryWorker.ts') passed.delete('ERP_BATCH_SIZE');
      if (fn.entry === 'functions/reconciler.ts') passed.add('ERP_BATCH_SIZE');
      return { ...fn, passed };
    });
    // Act
    const found = mismatches(functions, documented, (entry) => settingsReadBy(root, entry, documented));
    // Assess
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ErpDelivery.* reads ERP_BATCH_SIZE, not passed$/),
        expect.stringMatching(/^Reconciler.* is passed ERP_BATCH_SIZE, never read$/),
      ]),
    );
  });
});
