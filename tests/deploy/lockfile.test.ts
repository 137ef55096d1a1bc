import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

/*
 * `.ci/run` installs with `npm ci`, which refuses a lockfile that lacks an optional dependency of a package it
 * installs. npm 11 on a machine that has node_modules already writes lockfiles without the other platforms'
 * optional packages (npm/cli#4828: Biome's cli-darwin-*, cli-win32-*...), and CI then fails on a fresh clone.
 */
interface LockPackage {
  optionalDependencies?: Record<string, string>;
}
interface Lockfile {
  packages: Record<string, LockPackage>;
}

/** Every `<package> -> <optional dependency>` the lockfile names but has no entry for (where npm would look). */
const missingOptionalPackages = (lock: Lockfile): string[] => {
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      const hoisted = `node_modules/${name}`;
      const nested = `${path}/node_modules/${name}`;
      if (!lock.packages[hoisted] && !lock.packages[nested]) missing.push(`${path} -> ${name}`);
    }
  }
  return missing;
};

describe('package-lock.json', () => {
  it('lists every optional dependency of every package, for every platform, so that npm ci installs it', async () => {
    // Prepare
    const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as Lockfile;

    // Act
    const missing = missingOptionalPackages(lock);

    // Assess
    expect(missing).toEqual([]);
  });

  it('reports a platform package left out (negative control: the lockfile npm/cli#4828 writes)', async () => {
    // Prepare
    const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as Lockfile;
    delete lock.packages['node_modules/@biomejs/cli-darwin-arm64'];

    // Act
    const missing = missingOptionalPackages(lock);

    // Assess
    expect(missing).toEqual(['node_modules/@biomejs/biome -> @biomejs/cli-darwin-arm64']);
  });
});
