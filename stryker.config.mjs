// @ts-check
/**
 * Mutation testing of the correctness core (StrykerJS with the vitest runner): `npm run mutate`.
 *
 * Each target names the code it mutates and the tests that are meant to pin it; only those tests run.
 * `npm run mutate` mutates every target; `npm run mutate -- --mutate 'lib/validation/**\/*.ts'` (quoted, so
 * that the shell leaves the glob alone) or `--mutate lib/downstream/erp/response.ts` mutates only what is named,
 * and runs only the tests of the targets it falls in. Reports: reports/mutation/ (gitignored).
 *
 * TypeScript 7 has no JS API: no typescript checker, and `tsconfigFile` names a file that does not exist, so
 * that Stryker does not load `typescript` to rewrite tsconfig.json in its sandbox. Vitest strips the types.
 */

/** @type {{ name: string; mutate: string[]; tests: string[] }[]} */
export const targets = [
  {
    name: 'validation',
    mutate: ['lib/validation/**/*.ts', '!lib/validation/generated/**'],
    tests: ['tests/validation/**/*.test.ts'],
  },
  {
    name: 'answer classification',
    mutate: ['lib/downstream/erp/response.ts', 'lib/downstream/crm/response.ts'],
    tests: [
      'tests/erp/erpResponse.test.ts',
      'tests/erp/erpClassification.test.ts',
      'tests/erp/erpClient.test.ts',
      'tests/crm/crmResponse.test.ts',
      'tests/crm/crmClassification.test.ts',
      'tests/crm/crmClient.test.ts',
    ],
  },
  {
    name: 'intake',
    mutate: [
      'lib/intake/acceptRecords.ts',
      'lib/intake/acceptContent.ts',
      'lib/intake/nameKeyedRecord.ts',
      'lib/intake/idempotencyHold.ts',
      'lib/intake/recordIds.ts',
      'lib/intake/deadline.ts',
      'lib/concurrency/bounded.ts',
      'lib/intake/errors.ts',
      'lib/records/recordId.ts',
    ],
    tests: ['tests/intake/**/*.test.ts', 'tests/concurrency/**/*.test.ts'],
  },
  {
    name: 'delivery',
    mutate: ['lib/delivery/**/*.ts', 'lib/store/statusUpdates.ts'],
    tests: ['tests/delivery/**/*.test.ts', 'tests/store/statusUpdates.test.ts'],
  },
  {
    // A downstream's hold: its rules, its store, and the visibility of a held message; the worker's side of it is
    // pinned by tests/delivery/hold.test.ts and batching.test.ts (a hold met by a batch), the reconciler's probe of
    // a long hold by tests/reconcile/longHolds.test.ts.
    name: 'outage',
    mutate: ['lib/outage/**/*.ts'],
    tests: [
      'tests/outage/**/*.test.ts',
      'tests/delivery/hold.test.ts',
      'tests/delivery/batching.test.ts',
      'tests/reconcile/longHolds.test.ts',
    ],
  },
  {
    name: 'reconciler',
    mutate: ['lib/reconcile/**/*.ts', 'lib/store/openRecords.ts', 'lib/store/sparseIndex.ts'],
    tests: ['tests/reconcile/**/*.test.ts', 'tests/store/openRecords.test.ts'],
  },
  {
    name: 'redrive',
    mutate: ['lib/redrive/**/*.ts'],
    // tests/retention/redrive.test.ts: a failed record whose personal data is gone is counted, not reopened.
    tests: ['tests/delivery/redrive*.test.ts', 'tests/retention/redrive.test.ts'],
  },
  {
    // recordAttempt and reopenFailedRecord, which write the events' outbox, are in `delivery` (statusUpdates.ts).
    name: 'events',
    mutate: ['lib/events/stateChange.ts', 'lib/outbox/publish.ts', 'lib/records/stateChange.ts'],
    tests: ['tests/events/**/*.test.ts', 'tests/store/statusUpdates.test.ts'],
  },
  {
    name: 'retention',
    mutate: ['lib/retention/**/*.ts', 'lib/records/retention.ts'],
    tests: ['tests/retention/**/*.test.ts'],
  },
];

/** The `--mutate`/`-m` patterns given on the command line (comma-separated or repeated), without ranges. */
const mutateArguments = (argv) => {
  const patterns = [];
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    const inline = /^(?:--mutate|-m)=(.*)$/.exec(argument);
    const value = inline ? inline[1] : argument === '--mutate' || argument === '-m' ? argv[++i] : undefined;
    if (value) patterns.push(...value.split(',').filter(Boolean));
  }
  // `file.ts:10-20` mutates a range of a file; the file is what picks the target.
  return patterns.map((pattern) => pattern.replace(/(:\d+(:\d+)?-\d+(:\d+)?)$/, ''));
};

/** The literal part of a glob: `lib/validation/**\/*.ts` → `lib/validation/`. */
const stem = (pattern) => pattern.replace(/^!/, '').split(/[*?[{]/)[0];

/** A target is picked when one of its globs and one of the given patterns could name the same file. */
const overlaps = (target, patterns) =>
  target.mutate
    .filter((glob) => !glob.startsWith('!'))
    .some((glob) =>
      patterns.some(
        (pattern) => stem(pattern).startsWith(stem(glob)) || stem(glob).startsWith(stem(pattern)),
      ),
    );

const given = mutateArguments(process.argv.slice(2));
const picked = given.length === 0 ? targets : targets.filter((target) => overlaps(target, given));
if (given.length > 0 && picked.length === 0) {
  throw new Error(
    `--mutate ${given.join(',')} is in no mutation target (stryker.config.mjs): ${targets.map((t) => t.name).join(', ')}`,
  );
}

// Only the picked targets' tests run: vitest.mutate.config.ts includes just these (Stryker's test runner
// processes inherit the environment). Not Stryker's own `testFiles` option: with it, Stryker 10.1 activates a
// mutant of module-level code (a static mutant) only after the module has loaded, so every such mutant
// "survives" untested.
process.env.MUTATE_TEST_FILES = JSON.stringify(picked.flatMap((target) => target.tests));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  checkers: [],
  tsconfigFile: 'tsconfig.stryker-none.json',
  coverageAnalysis: 'perTest',
  // The cores are shared with other work; one test runner at a time.
  concurrency: 1,
  mutate: targets.flatMap((target) => target.mutate),
  // Only what the tests read is copied to Stryker's sandbox: the tree is shared, and a file that another process
  // removes between listing and copying would end the run.
  ignorePatterns: [
    '/*',
    ...[
      'lib',
      'tests',
      'testkit',
      'local',
      'soak',
      'tools',
      'schemas',
      'scripts',
      'sandbox',
      'config',
      'functions',
      'deploy',
    ].map((dir) => `!/${dir}`),
    ...['package.json', 'tsconfig.json', 'serverless.yml', 'openapi.json'].map((file) => `!/${file}`),
    '!/vitest.config.ts',
    '!/vitest.mutate.config.ts',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 80, break: null },
};
