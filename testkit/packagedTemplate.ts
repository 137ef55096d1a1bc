import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isMainThread } from 'node:worker_threads';

export type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  Condition?: string;
  DependsOn?: string | string[];
};
export interface Template {
  Resources: Record<string, Resource>;
  [section: string]: unknown;
}

const TEMPLATE = 'cloudformation-template-update-stack.json';
const lockDir = join(tmpdir(), 'dealer-gateway-package.lock');
const STALE_LOCK_MS = 5 * 60_000;

/**
 * Runs `fn` while no other test file packages: `npm run package` rewrites the bundles in `.esbuild/`, which
 * packaging and the bundle tests read. A lock directory (mkdir is atomic) serialises the test workers.
 */
export const withPackageLock = async <T>(fn: () => Promise<T>): Promise<T> => {
  for (;;) {
    try {
      await mkdir(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lockDir).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(lockDir, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
};

/**
 * This test run, the same in every worker: the vitest main process (the parent of a forked worker, the process
 * itself for a worker thread) and its start time, so that a reused pid never passes for the same run.
 * Undefined where /proc does not tell the start time: then every caller packages for itself.
 */
const runKey = async (): Promise<string | undefined> => {
  const main = isMainThread ? process.ppid : process.pid;
  try {
    const stat = await readFile(`/proc/${main}/stat`, 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return startTime ? `${main}-${startTime}` : undefined;
  } catch {
    return undefined;
  }
};

/** `npm run package` as a user runs it (bundles, then osls package), without AWS credentials. */
export const runPackage = async (outDir: string, cwd = process.cwd()): Promise<void> => {
  // Not the local resources a test file may have set up: serverless.yml takes them over its references (they are
  // for the local runner), and the template would name the test's queues, table and bus.
  const localResources = [
    'SALES_REGISTRATION_QUEUE_URL',
    'CASE_QUEUE_URL',
    'RECORDS_TABLE',
    'EVENT_BUS_NAME',
  ];
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !localResources.includes(k)),
  );
  await promisify(execFile)('npm', ['run', 'package', '--', '--stage', 'ci', '--package', outDir], {
    cwd,
    env: { ...env, PATH: `${join(process.cwd(), 'node_modules', '.bin')}:${process.env.PATH}` },
    maxBuffer: 16 * 1024 * 1024,
  });
};

/**
 * The CloudFormation template `npm run package -- --stage ci` writes, packaged once per test run for all
 * test files that ask (under {@link withPackageLock}). `dir` is the package directory; a caller may remove
 * it when done (the next caller then packages again).
 *
 * @example
 * const { template } = await packagedTemplate();
 */
export const packagedTemplate = async (): Promise<{ dir: string; template: Template }> =>
  withPackageLock(async () => {
    const key = await runKey();
    const dir = key
      ? join(tmpdir(), `dealer-gateway-package-${key}`)
      : await mkdtemp(join(tmpdir(), 'dealer-gateway-package-'));
    const read = async () => JSON.parse(await readFile(join(dir, TEMPLATE), 'utf8')) as Template;
    try {
      return { dir, template: await read() };
    } catch {
      await runPackage(dir);
      return { dir, template: await read() };
    }
  });
