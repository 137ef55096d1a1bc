import { describe, expect, it } from 'vitest';
import { dynaliteDb } from '../../local/emulators/dynalite/dynaliteInternals.ts';

describe("the local store's hold on dynalite's internals", () => {
  it('accepts the installed dynalite', () => {
    // Act
    const db = dynaliteDb();

    // Assess
    expect(typeof db.updateIndexes).toBe('function');
  });
});
