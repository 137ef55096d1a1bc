import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The vitest config Stryker runs (stryker.config.mjs): the project's own, with its `sdk` project only, and only
 * the test files of the targets being mutated (`MUTATE_TEST_FILES`, a JSON array of globs set by
 * stryker.config.mjs). The `json-clients` project runs the intake suites a second time with other AWS clients;
 * under Stryker that would double the time of every intake mutant for the same code under mutation.
 */
const include: string[] = process.env.MUTATE_TEST_FILES
  ? JSON.parse(process.env.MUTATE_TEST_FILES)
  : ['tests/**/*.test.ts'];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: [{ extends: true, test: { name: 'sdk', include } }],
  },
});
