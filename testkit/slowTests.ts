/**
 * The test files that start `npm start`, package the template or wait on real time for long (measured: each takes
 * 5 s or more on the 2-core machine; tests/README.md, "How long the tests take"). `npm test` runs them first, so the
 * long ones never start last and leave a core idle meanwhile; `npm run test:quick` leaves them out.
 */
export const SLOW_TESTS: readonly string[] = [
  // `npm start`, whole.
  'tests/e2e/**',
  'tests/records/npmStart.test.ts',
  'tests/docs/testModeExamples.test.ts',
  'tests/docs/feedExamples.test.ts',
  // Properties over many runs on the real stand-ins.
  'tests/property/**',
  // `npm run package` (the template), once per run, and what reads it.
  'tests/deploy/**',
  'tests/settings/passed.test.ts',
  // Real time: pollers, a store killed mid-write, two workers at once, floods.
  'tests/local/fairDelivery.test.ts',
  'tests/local/pollerConcurrency.test.ts',
  'tests/local/storeCrash.test.ts',
  'tests/local/queuePoller.test.ts',
  'tests/delivery/worker.test.ts',
  'tests/delivery/batching.test.ts',
  'tests/delivery/redrive.test.ts',
  'tests/intake/keyedContent.test.ts',
  'tests/feed/slowWrites.test.ts',
  // Real timeouts, leases running out, command lines and serverless-offline started as processes.
  'tests/aws/jsonProtocolDeadlines.test.ts',
  'tests/delivery/lease.test.ts',
  'tests/records/npmRecords.test.ts',
  'tests/records/cli.test.ts',
  'tests/tools/commandLines.test.ts',
  'tests/forms/offlineCors.test.ts',
];

/** Of the slow ones, these take longest: they start first of all. */
export const SLOWEST_FIRST: readonly string[] = [
  'tests/property/holdAndBatching.property.test.ts',
  'tests/e2e/soak.test.ts',
  'tests/e2e/quietOutage.test.ts',
  'tests/e2e/outage.test.ts',
  'tests/e2e/restart.test.ts',
  'tests/e2e/npmStart.test.ts',
];
