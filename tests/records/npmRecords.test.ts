import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StatusRecord } from '../../lib/records/types.ts';
import { projectRoot } from '../../local/project.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { acceptRecord, attempt } from './seed.ts';

/*
 * `npm run records` as an operator types it: real npm, real node, the script reading a runner.json that points at
 * this file's table on dynalite (through the call recorder) as a running `npm start` would.
 */

let recorder: AwsCallRecorder;
let dataDir: string;
let rejected: StatusRecord;
let delivered: StatusRecord;

beforeAll(async () => {
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
  });
  await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = recorder.endpoint;
  dataDir = await mkdtemp(join(tmpdir(), 'records-npm-'));
  await writeFile(
    join(dataDir, 'runner.json'),
    JSON.stringify({
      dynamoEndpoint: recorder.endpoint,
      env: {
        RECORDS_TABLE: process.env.RECORDS_TABLE,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      },
    }),
  );
  // A sale the SAP sandbox refused (a frame number registered twice) and a delivered one.
  rejected = await attempt(await acceptRecord('salesRegistration', { frame: 'JH2TWICE' }), {
    status: 'rejected',
    error: 'FrameNum JH2TWICE is already registered',
    at: '2026-11-22T08:00:02.000Z',
  });
  delivered = await attempt(await acceptRecord('salesRegistration', { frame: 'JH2ONCE' }), {
    status: 'delivered',
    downstreamId: '4900000017',
    at: '2026-11-22T08:00:03.000Z',
  });
});
afterAll(async () => {
  await recorder.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The environment without the npm_* settings of whatever npm started this test run. */
const cleanEnv = (changes: Record<string, string>) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
  ...changes,
});

const run = (command: string, args: string[], changes: Record<string, string> = { DATA_DIR: dataDir }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      command,
      args,
      { cwd: projectRoot, env: cleanEnv(changes), timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const npm = (...args: string[]) => run('npm', args);

describe('npm run records, spawned', () => {
  it('npm run records -- --status rejected: the rejected sale only', async () => {
    // Act
    const { code, stdout } = await npm('run', 'records', '--', '--status', 'rejected');
    // Assess: npm's banner, then the table with the rejected sale only.
    expect(code).toBe(0);
    const table = stdout.slice(stdout.indexOf('ID '));
    expect(table).toContain(rejected.id);
    expect(table).toContain('FrameNum JH2TWICE is already registered');
    expect(table).not.toContain(delivered.id);
    expect(table.trimEnd().split('\n').at(-1)).toBe('1 record(s)');
    expect(recorder.calls.map((call) => call.operation)).not.toContain('Scan');
  }, 60_000);

  it('npm run -s records -- --status rejected --json: NDJSON alone on stdout', async () => {
    const { code, stdout } = await npm(
      'run',
      '-s',
      'records',
      '--',
      '--status',
      'rejected',
      '--frame',
      'JH2TWICE',
      '--json',
    );
    expect(code).toBe(0);
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    ).toEqual([rejected.id]);
  }, 60_000);

  it('npm run records --counts (no --) is refused with the -- form named; with -- both switches reach the script', async () => {
    const without = await npm('run', '-s', 'records', '--counts', '--json');
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('write npm run records -- --counts --json');
    const { code, stdout } = await npm('run', '-s', 'records', '--', '--counts', '--json', '--kind', 'sales');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      salesRegistration: { accepted: 0, delivered: 1, rejected: 1, failed: 0 },
      holds: { erp: { held: false } },
    });
  }, 60_000);

  it('exit code 2 and the -- form to use when npm lost which value was which', async () => {
    const { code, stdout, stderr } = await npm(
      'run',
      'records',
      '--client',
      'example-dealer',
      '--frame',
      'JH2TWICE',
    );
    expect(code).toBe(2);
    expect(stdout).not.toContain('ID ');
    expect(stderr).toContain('write npm run records -- --client <value> --frame <value>');
  }, 60_000);

  it('exit code 1 when no npm start is running (no runner.json), and when the one named is gone', async () => {
    // Prepare: a data dir without runner.json, and one whose runner.json names a port nobody listens on.
    const empty = await mkdtemp(join(tmpdir(), 'records-none-'));
    const stale = await mkdtemp(join(tmpdir(), 'records-stale-'));
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    await writeFile(
      join(stale, 'runner.json'),
      JSON.stringify({
        dynamoEndpoint: `http://127.0.0.1:${port}`,
        env: {
          RECORDS_TABLE: 't',
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'l',
          AWS_SECRET_ACCESS_KEY: 'l',
        },
      }),
    );
    // Act
    const none = await run(process.execPath, ['scripts/records.ts', '--status', 'failed'], {
      DATA_DIR: empty,
    });
    const gone = await run(process.execPath, ['scripts/records.ts', '--counts'], { DATA_DIR: stale });
    // Assess
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `npm run records: no running local service (${join(empty, 'runner.json')} is missing): start it with npm start, or pass --stage\n`,
    );
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(
      `npm run records: the local service (http://127.0.0.1:${port}) does not answer: start it with npm start\n`,
    );
    await Promise.all([rm(empty, { recursive: true }), rm(stale, { recursive: true })]);
  }, 60_000);
});
