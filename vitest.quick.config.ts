/**
 * `npm run test:quick`: every test that needs neither `npm start`, the packaged template nor a long real wait
 * (testkit/slowTests.ts), for whoever changes the code: about a minute on the 2-core machine. `npm test` runs all.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import { SLOW_TESTS } from './testkit/slowTests.ts';
import base from './vitest.config.ts';

export default mergeConfig(base, defineConfig({ test: { exclude: [...SLOW_TESTS, '**/node_modules/**'] } }));
