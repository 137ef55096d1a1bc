/**
 * The emulator patches' one version gate (local/emulators/versionGate.ts): the installed fauxqs, dynalite and
 * serverless-offline are exactly the versions the patches were written for, and any other version is refused with
 * the package, the version found and the version expected.
 */
import { describe, expect, it } from 'vitest';
import {
  assertPatchedVersion,
  assertPatchedVersions,
  installedVersion,
  PATCHED_VERSIONS,
} from '../../local/emulators/versionGate.ts';

describe('the emulator patches’ version gate', () => {
  it('lets the installed versions through: the ones the patches were written for', () => {
    // Act / Assess
    expect(() => assertPatchedVersions()).not.toThrow();
    for (const [name, version] of Object.entries(PATCHED_VERSIONS))
      expect(installedVersion(name)).toBe(version);
  });

  it.each([
    ['fauxqs', '2.4.2'],
    ['dynalite', '4.0.1'],
    ['dynalite', '3.2.2'],
    ['serverless-offline', '14.9.0'],
  ] as const)('(control) refuses %s %s, naming what it found and what it expects', (name, found) => {
    // Prepare
    const versionOf = (asked: string) => (asked === name ? found : installedVersion(asked));
    // Act / Assess
    expect(() => assertPatchedVersions(versionOf)).toThrow(
      `${name} ${found} is installed, but local/emulators/ patches ${name} ${PATCHED_VERSIONS[name]} exactly`,
    );
  });

  it('refuses a package that is not installed', () => {
    expect(() => assertPatchedVersion('fauxqs', () => undefined)).toThrow(
      'fauxqs (not installed) is installed, but local/emulators/ patches fauxqs 2.4.1 exactly',
    );
  });
});
