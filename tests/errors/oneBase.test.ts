/**
 * One error vocabulary: every error class of lib/ stands on the product's base (lib/errors.ts's `GatewayError`),
 * none on `Error` or another built-in error directly, and each is named as a noun ending in `Error`. Read from the
 * source, so a class added the old way fails here; the planted sources show the check fails when it should.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const LIB = join(ROOT, 'lib');

/** The base every error class of lib/ extends, and the one file that may extend `Error` itself. */
const BASE = { name: 'GatewayError', file: 'lib/errors.ts' };

/** The built-in error classes, which only the base may extend. */
const BUILT_IN =
  /^(?:globalThis\.)?(?:Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError|DOMException)$/;

/** Every TypeScript source of a directory, at any depth. */
const sourcesOf = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesOf(path);
    return /\.(ts|cts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.cts') ? [path] : [];
  });

interface ClassDeclaration {
  file: string;
  /** Empty for a class expression without a name (`class extends AwsServiceError`). */
  name: string;
  parent: string;
}

/** The classes a source declares with `extends`, comments left out (an example in TSDoc is no class). */
const classesIn = (file: string, text: string): ClassDeclaration[] => {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/\bclass\s+(\w*)\s*(?:<[^{]*?>)?\s*extends\s+([\w.]+)/g)].map((match) => ({
    file,
    name: match[1],
    parent: match[2],
  }));
};

/**
 * What breaks the vocabulary: a class extending a built-in error other than the base, and an error class (one
 * whose parents lead to a built-in error) not named `…Error`.
 */
const offences = (classes: ClassDeclaration[]): string[] => {
  const parentOf = new Map(classes.filter((c) => c.name).map((c) => [c.name, c.parent]));
  const isError = (name: string, seen = new Set<string>()): boolean => {
    if (BUILT_IN.test(name)) return true;
    const parent = parentOf.get(name);
    if (parent === undefined || seen.has(name)) return false;
    return isError(parent, seen.add(name));
  };
  return classes.flatMap(({ file, name, parent }) => {
    const label = `${file}: class ${name || '(anonymous)'} extends ${parent}`;
    if (BUILT_IN.test(parent) && !(name === BASE.name && file === BASE.file))
      return [`${label}: extend ${BASE.name} instead`];
    if (name && isError(parent) && !name.endsWith('Error')) return [`${label}: name it …Error`];
    return [];
  });
};

const libClasses = sourcesOf(LIB).flatMap((path) =>
  classesIn(relative(ROOT, path), readFileSync(path, 'utf8')),
);

describe('the error classes of lib/', () => {
  it('all stand on GatewayError and are named …Error', () => {
    // Assess
    expect(libClasses.filter((c) => c.name.endsWith('Error')).length).toBeGreaterThanOrEqual(15);
    expect(offences(libClasses)).toEqual([]);
  });

  it('have the base as the only class that extends Error itself', () => {
    // Assess
    expect(libClasses.filter((c) => BUILT_IN.test(c.parent))).toEqual([
      { file: BASE.file, name: BASE.name, parent: 'Error' },
    ]);
  });

  it('finds planted classes that break the vocabulary, and lets the right ones be', () => {
    // Prepare
    const planted = [
      ['lib/errors.ts', 'export class GatewayError extends Error {}'],
      [
        'lib/planted/a.ts',
        "export class PlantedFailure extends Error {\n  override name = 'PlantedFailure';\n}",
      ],
      ['lib/planted/b.ts', 'class Refusal extends GatewayError {}\nexport class Late extends Refusal {}'],
      ['lib/planted/c.ts', 'export const wrapped = class extends globalThis.Error {};'],
      [
        'lib/planted/d.ts',
        '/** class InComment extends Error */\nexport class FineError extends GatewayError {}',
      ],
      ['lib/planted/e.ts', 'export class Registry extends Map<string, number> {}'],
    ];
    // Act
    const found = offences(planted.flatMap(([file, text]) => classesIn(file, text)));
    // Assess
    expect(found).toEqual([
      'lib/planted/a.ts: class PlantedFailure extends Error: extend GatewayError instead',
      'lib/planted/b.ts: class Refusal extends GatewayError: name it …Error',
      'lib/planted/b.ts: class Late extends Refusal: name it …Error',
      'lib/planted/c.ts: class (anonymous) extends globalThis.Error: extend GatewayError instead',
    ]);
  });
});
