/**
 * The one gate in front of the emulator patches (local/emulators/README.md): each patch reaches into its package's
 * internals as they are in one exact version, so the local stack refuses to start with any other version rather
 * than run a patch against code it was not written for. Raising a version means reading the patched internals
 * again, running the patch's test (it shows what breaks without it), and changing the version here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project.ts';

/** The exact versions the patches were written for, by package. */
export const PATCHED_VERSIONS = {
  fauxqs: '2.4.1',
  dynalite: '4.0.0',
  'serverless-offline': '14.8.2',
} as const;

export type PatchedPackage = keyof typeof PATCHED_VERSIONS;

/** The installed version of a package (its package.json under node_modules), or undefined when absent. */
export const installedVersion = (name: string, root: string = projectRoot): string | undefined => {
  try {
    return (
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version?: string;
      }
    ).version;
  } catch {
    return undefined;
  }
};

/**
 * Throws, naming the package, the version found and the version expected, unless the installed package is the
 * exact version its patches were written for.
 *
 * @example
 * assertPatchedVersion('fauxqs'); // fine with fauxqs 2.4.1 installed
 * assertPatchedVersion('dynalite', () => '4.1.0');
 * // throws: dynalite 4.1.0 is installed, but local/emulators/ patches dynalite 4.0.0 exactly: ...
 */
export const assertPatchedVersion = (
  name: PatchedPackage,
  versionOf: (name: string) => string | undefined = installedVersion,
): void => {
  const expected = PATCHED_VERSIONS[name];
  const found = versionOf(name);
  if (found === expected) return;
  throw new Error(
    `${name} ${found ?? '(not installed)'} is installed, but local/emulators/ patches ${name} ${expected} exactly: ` +
      `read the patched internals of ${name} ${found ?? ''} again (local/emulators/README.md), run the patches' ` +
      `tests, then change PATCHED_VERSIONS in local/emulators/versionGate.ts`,
  );
};

/**
 * Checks every patched package at once (npm start, before any emulator starts).
 *
 * @example
 * assertPatchedVersions();
 */
export const assertPatchedVersions = (
  versionOf: (name: string) => string | undefined = installedVersion,
): void => {
  for (const name of Object.keys(PATCHED_VERSIONS) as PatchedPackage[]) assertPatchedVersion(name, versionOf);
};
