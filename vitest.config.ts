import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './testkit/slowFirstSequencer.ts';

export default defineConfig({
  test: {
    globalSetup: ['testkit/globalSetup.ts'],
    // Tees every worker's stdout and stderr into files that globalSetup scans for personal data at the end.
    // freshSettings: the service reads each setting once; every test starts with what the environment says now.
    setupFiles: ['testkit/logCapture.ts', 'testkit/freshSettings.ts'],
    // Short delivery backoff and few attempts, so that retry and dead-letter paths run in seconds.
    env: {
      DELIVERY_MAX_ATTEMPTS: '3',
      DELIVERY_RETRY_BASE_SECONDS: '1',
      // A short claim, so that a copy of a message whose worker "died" is retried within the test.
      DELIVERY_LEASE_SECONDS: '2',
      POWERTOOLS_METRICS_DISABLED: 'true',
      // The stage's secret key of content ids, as npm start makes one (lib/intake/contentIdKey.ts).
      CONTENT_ID_KEY: 'test-content-id-key',
    },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    include: ['tests/**/*.test.ts'],
    // One worker per core (vitest's default leaves one core idle: a single worker on the 2-core machine), the slow
    // files first (testkit/slowTests.ts), so they run beside the quick ones rather than after them.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: SlowFirstSequencer },
  },
});
