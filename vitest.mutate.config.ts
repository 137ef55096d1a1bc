import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The vitest config Stryker runs (stryker.config.mjs): the project's own, with only the test files of the targets
 * being mutated (`MUTATE_TEST_FILES`, a JSON array of globs set by stryker.config.mjs).
 */
const include: string[] = process.env.MUTATE_TEST_FILES
  ? JSON.parse(process.env.MUTATE_TEST_FILES)
  : ['tests/**/*.test.ts'];

export default defineConfig({
  ...base,
  // Instrumented code on cores shared with other work runs several times slower: a test that needs 1 s in
  // `npm test` must not time out in the dry run (Stryker's own timeout still catches a mutant that loops).
  test: { ...base.test, include, testTimeout: 120_000 },
});
