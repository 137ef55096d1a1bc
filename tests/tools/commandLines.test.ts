import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { freshAws } from '../../testkit/freshAws.ts';

/*
 * The operators' command lines as they are typed (npm, node, the scripts), each mistake answered with a message
 * naming it, the usage, exit code 2 and no stack trace, and nothing changed: every AWS call of the process goes to a
 * recorder, and the data directory names a running npm start (runner.json) whose endpoints are that recorder, so a
 * tool that went on would be seen calling it.
 */

let recorder: AwsCallRecorder;
let dataDir: string;

beforeAll(async () => {
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
  });
  await freshAws();
  dataDir = await mkdtemp(join(tmpdir(), 'command-lines-'));
  const queue = (name: string) => ({ url: `${recorder.endpoint}/000000000000/${name}` });
  await writeFile(
    join(dataDir, 'runner.json'),
    JSON.stringify({
      sqsEndpoint: recorder.endpoint,
      dynamoEndpoint: recorder.endpoint,
      env: {
        RECORDS_TABLE: process.env.RECORDS_TABLE,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      },
      queues: Object.fromEntries(
        [
          'SalesRegistrationQueue',
          'SalesRegistrationDeadLetterQueue',
          'CaseQueue',
          'CaseDeadLetterQueue',
        ].map((id) => [id, queue(id)]),
      ),
    }),
  );
});
afterAll(async () => {
  await recorder.stop();
  await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  recorder.calls.length = 0;
});

/** This process's environment without whatever npm started the test run set, and every AWS call to the recorder. */
const toolEnv = () => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|AWS_)/i.test(name))),
  DATA_DIR: dataDir,
  AWS_ENDPOINT_URL: recorder.endpoint,
  AWS_ACCESS_KEY_ID: 'operator',
  AWS_SECRET_ACCESS_KEY: 'operator',
  AWS_REGION: 'eu-west-1',
});

/** Runs a command line in the project; its exit code and output. */
const run = (command: string, args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { cwd: projectRoot, env: toolEnv(), timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

/** A refusal: exit code 2, the message and the usage on stderr, no Node parse error, no stack trace. */
const expectRefused = (answer: { code: number; stderr: string }, message: string, usage: string): void => {
  expect(answer.code, answer.stderr).toBe(2);
  expect(answer.stderr).toContain(message);
  expect(answer.stderr).toContain(usage);
  expect(answer.stderr).not.toMatch(/ERR_PARSE_ARGS|\n\s+at /);
};

/** The data directory holds what it held: no webhook secrets made, nothing but the runner's file. */
const dataDirUnchanged = async () => expect(await readdir(dataDir)).toEqual(['runner.json']);

describe('npm run redrive: a mistake redrives nothing', () => {
  it.each([
    [['erp', '--dealer', '1234'], 'unknown option --dealer'],
    [['erp', '--stage'], '--stage needs a value'],
    [['erp', '--stage', '--region', 'eu-west-1'], '--stage needs a value'],
    [['erp', 'crm'], 'one queue at a time: erp, then run it again for the next (unexpected: crm)'],
    [['sap'], 'the queue must be erp or crm, not "sap"'],
    [['erp', '--region', 'eu-central-1'], '--region goes with --stage'],
  ])(
    'npm run redrive -- %j: exit code 2, "%s", no call',
    async (args, message) => {
      // Act
      const answer = await run('npm', ['run', 'redrive', '--', ...args]);
      // Assess
      expectRefused(
        answer,
        message,
        'usage: npm run redrive -- erp|crm [--stage <stage>] [--region <region>]',
      );
      expect(answer.stdout).not.toContain('moved');
      expect(recorder.calls).toEqual([]);
    },
    60_000,
  );

  it('npm run redrive erp --stage prod (no --): npm took --stage, so the local queue is not redriven instead', async () => {
    // Act
    const answer = await run('npm', ['run', 'redrive', 'erp', '--stage', 'prod']);
    // Assess
    expectRefused(answer, 'write npm run redrive -- --stage <value>', 'usage: npm run redrive');
    expect(recorder.calls).toEqual([]);
  }, 60_000);
});

describe('npm run records: a client nobody knows is no empty result', () => {
  it('npm run records -- --client nobody: exit code 2 naming the configured clients, only reads', async () => {
    // Act
    const listed = await run('npm', ['run', 'records', '--', '--client', 'nobody']);
    const counted = await run(process.execPath, ['scripts/records.ts', '--counts', '--client', 'nobody']);
    // Assess
    for (const answer of [listed, counted]) {
      expectRefused(
        answer,
        '--client "nobody" is no client of config/clients.json (example-dealer, example-web-forms, example-dealer-test)',
        'usage:\n  npm run records --',
      );
      expect(answer.stdout).not.toMatch(/no records|KIND/);
    }
    // It looked before it answered (a client removed from the configuration keeps its records), and wrote nothing.
    expect(new Set(recorder.calls.map((call) => call.operation))).toEqual(new Set(['Query']));
  }, 60_000);

  it('a configured client without records is an empty result, exit code 0', async () => {
    // Act
    const answer = await run(process.execPath, ['scripts/records.ts', '--client', 'example-web-forms']);
    // Assess
    expect(answer.code, answer.stderr).toBe(0);
    expect(answer.stdout.trim()).toBe('no records');
  }, 60_000);

  it.each([
    [['--dealer'], '--dealer needs a value'],
    [['--stage', '--status', 'failed'], '--stage needs a value'],
    [['--colour', 'red'], 'unknown option --colour'],
  ])(
    'node scripts/records.ts %j: exit code 2, "%s", no call',
    async (args, message) => {
      // Act
      const answer = await run(process.execPath, ['scripts/records.ts', ...args]);
      // Assess
      expectRefused(answer, message, 'usage:\n  npm run records --');
      expect(recorder.calls).toEqual([]);
    },
    60_000,
  );
});

describe('npm run webhook-secret: a mistake rotates nothing', () => {
  it.each([
    [['rotate', 'example-dealer', '--stage', '--region'], '--stage needs a value'],
    [['rotate', 'example-dealer', '--profile', 'ops'], 'unknown option --profile'],
    [['show', '--region', 'eu-central-1'], '--region goes with --stage'],
  ])(
    'node scripts/webhook-secret.ts %j: exit code 2, "%s", nothing made',
    async (args, message) => {
      // Act
      const answer = await run(process.execPath, ['scripts/webhook-secret.ts', ...args]);
      // Assess
      expectRefused(answer, message, 'usage: npm run webhook-secret --');
      expect(recorder.calls).toEqual([]);
      await dataDirUnchanged();
    },
    60_000,
  );

  it('npm run webhook-secret rotate example-dealer --stage=prod (no --): refused, not rotated in npm start instead', async () => {
    // Act
    const answer = await run('npm', ['run', 'webhook-secret', 'rotate', 'example-dealer', '--stage=prod']);
    // Assess
    expectRefused(
      answer,
      'write npm run webhook-secret -- --stage <value>',
      'usage: npm run webhook-secret --',
    );
    expect(recorder.calls).toEqual([]);
    await dataDirUnchanged();
  }, 60_000);
});
