import { describe, expect, it } from 'vitest';
import { assertSupportedDynalite, dynaliteDb } from '../../local/dynaliteInternals.ts';

describe("the local store's hold on dynalite's internals", () => {
  it('accepts the installed dynalite', () => {
    // Act
    const db = dynaliteDb();

    // Assess
    expect(typeof db.updateIndexes).toBe('function');
  });

  it.each(['4.0.1', '4.1.0', '5.0.0', '3.2.2'])(
    'refuses dynalite %s, whose internals were not read',
    (version) => {
      // Act / Assess
      expect(() => assertSupportedDynalite(version)).toThrow(
        `local/dynaliteInternals.ts patches dynalite 4.0.0, found ${version}`,
      );
    },
  );
});
