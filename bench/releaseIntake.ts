/**
 * Local intake against the previous release: the same flood (one client's sales, 20 a request, a few in flight)
 * through a fresh `npm start` of this tree and of the previous release's, interleaved round by round, so that a
 * regression shows as a ratio measured side by side rather than against a figure of another day.
 *
 * The previous release is PREVIOUS_RELEASE (the repository has no release tags): a git worktree of it is made in a
 * temporary directory, given this tree's node_modules (a symbolic link) and its generated validators, and removed
 * at the end. Move PREVIOUS_RELEASE forward when a release is cut (bench/README.md, "Local intake against the
 * previous release").
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { salesRegistrationInput, uniqueFrame } from '../testkit/factories/records.ts';
import { drive, type Planned, startNpm } from './localStack.ts';
import { projectRoot } from './proc.ts';
import { markdownTable, type ResultRow, ratio, yesNo } from './table.ts';

/** The previous release: the last commit whose figures bench/RESULTS.md recorded (2026-11-27) before local intake slowed down unnoticed. */
export const PREVIOUS_RELEASE = '8e613ed';

export interface ReleaseIntakeSettings {
  requests: number;
  recordsPerRequest: number;
  inFlight: number;
  rounds: number;
}

export const defaultReleaseIntakeSettings: ReleaseIntakeSettings = {
  requests: 250,
  recordsPerRequest: 20,
  inFlight: 8,
  rounds: 2,
};

interface FloodRun {
  side: 'previous' | 'this';
  seconds: number;
  recordsPerSecond: number;
  non200: number;
}

export interface ReleaseIntakeResult {
  settings: ReleaseIntakeSettings;
  previous: string;
  runs: FloodRun[];
}

const progress = (text: string) => process.stderr.write(`[bench intake] ${text}\n`);
const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();

/** One fresh `npm start` of `root` and the flood through it. */
const flood = async (root: string, settings: ReleaseIntakeSettings): Promise<Omit<FloodRun, 'side'>> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-intake-'));
  const stack = await startNpm(4, dataDir, {}, root);
  try {
    const planned: Planned[] = Array.from({ length: settings.requests }, (_, i) => ({
      path: '/erp/sales_registration',
      key: stack.keys.dealer,
      body: JSON.stringify(
        Array.from({ length: settings.recordsPerRequest }, (_, j) =>
          salesRegistrationInput({ FrameNum: uniqueFrame(`I${i}R${j}`) }),
        ),
      ),
    }));
    const figures = await drive(stack.port, planned, settings.inFlight);
    return {
      seconds: figures.seconds,
      recordsPerSecond: (figures.accepted.sales * settings.recordsPerRequest) / figures.seconds,
      non200: figures.non200,
    };
  } finally {
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
};

/**
 * The flood through the previous release and this tree, alternating, `rounds` times each.
 *
 * @example
 * const { runs } = await measureReleaseIntake({ ...defaultReleaseIntakeSettings, rounds: 1 });
 */
export const measureReleaseIntake = async (
  settings: ReleaseIntakeSettings = defaultReleaseIntakeSettings,
): Promise<ReleaseIntakeResult> => {
  const previous = git('rev-parse', '--short', PREVIOUS_RELEASE);
  const worktree = join(await mkdtemp(join(tmpdir(), 'dealer-gateway-release-')), 'tree');
  git('worktree', 'add', '--detach', worktree, previous);
  try {
    await symlink(join(projectRoot, 'node_modules'), join(worktree, 'node_modules'));
    execFileSync(process.execPath, ['scripts/build-validators.ts'], { cwd: worktree, stdio: 'ignore' });
    const runs: FloodRun[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [side, root] of [
        ['previous', worktree],
        ['this', projectRoot],
      ] as const) {
        progress(`round ${round}: ${side} (${side === 'this' ? 'this tree' : previous})…`);
        runs.push({ side, ...(await flood(root, settings)) });
      }
    }
    return { settings, previous, runs };
  } finally {
    git('worktree', 'remove', '--force', worktree);
  }
};

const total = (runs: FloodRun[]) => {
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  return {
    seconds,
    recordsPerSecond: runs.reduce((sum, r) => sum + r.recordsPerSecond * r.seconds, 0) / seconds,
  };
};

/** The summary row, the per-round table and how it is measured. */
export const releaseIntakeReport = (result: ReleaseIntakeResult): { rows: ResultRow[]; text: string } => {
  const { settings: s, previous } = result;
  const ours = total(result.runs.filter((r) => r.side === 'this'));
  const theirs = total(result.runs.filter((r) => r.side === 'previous'));
  const r = ours.recordsPerSecond / theirs.recordsPerSecond;
  const records = (s.requests * s.recordsPerRequest).toLocaleString('en-GB');
  const rows: ResultRow[] = [
    {
      benchmark: `local intake: one client's ${records} sales (${s.requests} requests of ${s.recordsPerRequest}, ${s.inFlight} in flight) through npm start, against the previous release (${s.rounds} round${s.rounds === 1 ? '' : 's'} each, interleaved)`,
      ours: `${ours.recordsPerSecond.toFixed(0)} records/s`,
      baseline: `${theirs.recordsPerSecond.toFixed(0)} records/s (${previous})`,
      ratio: ratio(r),
      target: '≥ 0.90x',
      met: yesNo(r >= 0.9),
    },
  ];
  const table = markdownTable(
    ['round', 'tree', 'all answered in', 'records/s', 'not 200'],
    result.runs.map((run, i) => [
      String(Math.floor(i / 2) + 1),
      run.side === 'this' ? 'this' : `previous release (${previous})`,
      `${run.seconds.toFixed(1)} s`,
      run.recordsPerSecond.toFixed(0),
      String(run.non200),
    ]),
  );
  const note =
    `A fresh \`npm start\` per run (own DATA_DIR and port, LOCAL_LAMBDA_CONCURRENCY 4), the previous release's (\`PREVIOUS_RELEASE\` in bench/releaseIntake.ts: a git worktree of ${previous} with this tree's node_modules) and this tree's alternating; ` +
    `at \`ready:\`, ${s.requests} requests of ${s.recordsPerRequest} distinct sales of example-dealer (unique FrameNum), ${s.inFlight} in flight; records/s from the first request to the last answer, over every round of a tree. ` +
    'The ratio is what a regression shows in (the machine is shared: a figure alone moves with its load); `--intake-requests 1000` sends 20,000 records. ' +
    "What this tree's intake does that the previous release's did not: it reads each request's legacy (unkeyed) content ids, one BatchGetItem of consistent key reads, before its writes; that keeps content accepted under its unkeyed id within the last 24 hours from becoming a second record, and costs npm start about 14 ms of CPU per request of 20 ([FINDINGS.md](FINDINGS.md) section 8, where the rest of the gap is).";
  return { rows, text: [table, '', `- ${note}`].join('\n') };
};
