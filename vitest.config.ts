import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/support/globalSetup.ts'],
    // Short delivery backoff and few attempts, so that retry and dead-letter paths run in seconds.
    env: {
      DELIVERY_MAX_ATTEMPTS: '3',
      DELIVERY_RETRY_BASE_SECONDS: '1',
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
