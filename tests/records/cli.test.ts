import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { localClientConfig } from '../../local/aws.ts';
import { createLocalResources } from '../../local/resources.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { personalValues } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { MASK } from '../../tools/records/constants.ts';
import { runRecords } from '../../tools/records/run.ts';
import type { RecordRow } from '../../tools/records/types.ts';
import { acceptRecord, attempt } from './seed.ts';

let recorder: AwsCallRecorder;
let dataDir: string;

beforeAll(async () => {
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
  });
  dataDir = await mkdtemp(join(tmpdir(), 'records-cli-'));
});
afterAll(async () => {
  await recorder.stop();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  // A table of its own for every test, and a runner.json naming it as a running npm start would; every DynamoDB
  // call (seeding and the script's) goes through the recorder.
  await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = recorder.endpoint;
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
  recorder.calls.length = 0;
});

afterEach(() => {
  // Whatever was asked, never a table scan.
  expect(recorder.calls.map((call) => call.operation)).not.toContain('Scan');
});

/** Runs `npm run records -- <argv>` in this process against the runner.json above. */
const records = async (argv: string[], options: { terminal?: boolean } = {}) => {
  let stdout = '';
  let stderr = '';
  const from = recorder.calls.length;
  const code = await runRecords(
    argv,
    { DATA_DIR: dataDir },
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
      errIsTerminal: options.terminal ?? false,
    },
  );
  const operations = recorder.calls.slice(from).map((call) => {
    const resource = call.authorised[0]?.resource;
    return `${call.operation}${resource && 'index' in resource && resource.index ? `:${resource.index}` : ''}`;
  });
  return { code, stdout, stderr, operations };
};

const ndjson = (stdout: string): RecordRow[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

/** A rejected sale, a delivered case, an accepted sale and a failed case (retried once, then failed). */
const seedMix = async () => {
  const rejected = await attempt(
    await acceptRecord('salesRegistration', { frame: 'JH2REJ', dealer: 100234, at: minutesAgo(90) }),
    { status: 'rejected', error: 'FrameNum already registered', at: minutesAgo(89) },
  );
  const delivered = await attempt(await acceptRecord('caseRecord', { at: minutesAgo(60) }), {
    status: 'delivered',
    downstreamId: '500Dn00000AbCdE',
    at: minutesAgo(59),
  });
  const accepted = await acceptRecord('salesRegistration', { frame: 'JH2ACC', at: minutesAgo(5) });
  const failed = await attempt(
    await acceptRecord('caseRecord', { at: minutesAgo(30), owner: 'example-dealer' }),
    { status: 'accepted', error: 'Salesforce answered 503', at: minutesAgo(29) },
    { status: 'failed', error: 'Salesforce answered 503', at: minutesAgo(28) },
  );
  return { rejected, delivered, accepted, failed };
};

describe('npm run records: listings', () => {
  it('lists every state of both kinds in an aligned table by default, from the status index only', async () => {
    // Prepare
    const { rejected, delivered, accepted, failed } = await seedMix();
    // Act
    const { code, stdout, stderr, operations } = await records([]);
    // Assess: sales first, then cases, by state; a column starts at the same place on every line.
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+KIND\s+STATUS\s+CLIENT\s+DEALER\s+FRAME\s+ATTEMPTS\s+ACCEPTED \(UTC\)/);
    expect(lines.slice(1, 5).map((line) => line.split(/\s+/)[0])).toEqual([
      accepted.id,
      rejected.id,
      delivered.id,
      failed.id,
    ]);
    const statusColumn = lines[0].indexOf('STATUS');
    expect(lines.slice(1, 5).map((line) => line.slice(statusColumn).split(' ')[0])).toEqual([
      'accepted',
      'rejected',
      'delivered',
      'failed',
    ]);
    expect(lines[2]).toContain('100234');
    expect(lines[2]).toContain('JH2REJ');
    expect(lines[2]).toContain('FrameNum already registered');
    expect(lines[3]).toContain('500Dn00000AbCdE');
    expect(lines[5]).toBe('4 record(s)');
    // Eight partitions (2 kinds x 4 states), one Query each; nothing else.
    expect(operations).toEqual(Array(8).fill('Query:status'));
  });

  it('writes one JSON object a line with --json: the documented row, no personal data', async () => {
    const { rejected } = await seedMix();
    const { code, stdout } = await records(['--status', 'rejected', '--kind', 'sales', '--json']);
    expect(code).toBe(0);
    expect(ndjson(stdout)).toEqual([
      {
        id: rejected.id,
        kind: 'salesRegistration',
        status: 'rejected',
        client: 'example-dealer',
        dealer: 100234,
        frameNum: 'JH2REJ',
        attempts: 1,
        acceptedAt: rejected.acceptedAt,
        updatedAt: rejected.updatedAt,
        error: 'FrameNum already registered',
      },
    ]);
    for (const value of personalValues) expect(stdout).not.toContain(value);
  });

  it('narrows by age (--older-than), client and dealer', async () => {
    const { rejected, delivered, failed } = await seedMix();
    const older = ndjson((await records(['--older-than', '45m', '--json'])).stdout).map((row) => row.id);
    const ofClient = ndjson(
      (await records(['--client', 'example-dealer', '--kind', 'cases', '--json'])).stdout,
    );
    const ofDealer = ndjson((await records(['--dealer', '100234', '--json'])).stdout).map((row) => row.id);
    expect(older.sort()).toEqual([rejected.id, delivered.id].sort());
    expect(ofClient.map((row) => row.id)).toEqual([failed.id]);
    expect(ofDealer).toEqual([rejected.id]);
  });

  it('with --dealer or --frame reads only the sales partitions', async () => {
    await seedMix();
    const { operations } = await records(['--dealer', '1234']);
    expect(operations).toEqual(Array(4).fill('Query:status'));
  });

  it('finds a frame number at every configured client through the frame index, or at the one given', async () => {
    // Prepare: the frame registered by a configured client twice and by an unconfigured one.
    const { rejected } = await seedMix();
    const again = await acceptRecord('salesRegistration', { frame: 'JH2REJ', at: minutesAgo(1) });
    const elsewhere = await acceptRecord('salesRegistration', { frame: 'JH2REJ', owner: 'not-configured' });
    // Act
    const everywhere = await records(['--frame', 'JH2REJ', '--json']);
    const atClient = await records(['--frame', 'JH2REJ', '--client', 'not-configured', '--json']);
    const rejectedOnly = await records(['--frame', 'JH2REJ', '--status', 'rejected', '--json']);
    // Assess: one Query of the frame index per configured client, then a read of each record found.
    expect(ndjson(everywhere.stdout).map((row) => row.id)).toEqual([rejected.id, again.id]);
    expect(everywhere.operations.filter((op) => op.startsWith('Query'))).toEqual(
      expect.arrayContaining(['Query:frame']),
    );
    expect(new Set(everywhere.operations)).toEqual(new Set(['Query:frame', 'GetItem']));
    expect(ndjson(atClient.stdout).map((row) => row.id)).toEqual([elsewhere.id]);
    // A client no longer configured keeps its records: listed, with a note that the name is not configured.
    expect([atClient.code, atClient.stderr]).toEqual([
      0,
      'npm run records: "not-configured" is no client of config/clients.json; its records are listed all the same\n',
    ]);
    expect(ndjson(rejectedOnly.stdout).map((row) => row.id)).toEqual([rejected.id]);
  });

  it('stops at --limit', async () => {
    for (let i = 0; i < 5; i++) await acceptRecord('caseRecord', { at: minutesAgo(10 - i) });
    const { stdout, operations } = await records(['--kind', 'cases', '--limit', '3', '--json']);
    expect(ndjson(stdout)).toHaveLength(3);
    expect(operations).toEqual(['Query:status']);
  });

  it('says so when nothing matches', async () => {
    const { code, stdout } = await records(['--status', 'failed']);
    expect(code).toBe(0);
    expect(stdout).toBe('no records\n');
    expect((await records(['--status', 'failed', '--json'])).stdout).toBe('');
  });

  it('shows a progress line on stderr with --progress (on a terminal, rewritten in place), never on stdout', async () => {
    for (let i = 0; i < 3; i++) await acceptRecord('caseRecord', { at: minutesAgo(10 - i) });
    const piped = await records(['--json', '--progress']);
    const terminal = await records(['--json'], { terminal: true });
    const quiet = await records(['--json']);
    expect(piped.stderr).toBe('listed 3 record(s)...\n');
    expect(terminal.stderr).toBe('listed 3 record(s)...\r\x1b[2K\r');
    expect(quiet.stderr).toBe('');
    for (const run of [piped, terminal, quiet]) expect(ndjson(run.stdout)).toHaveLength(3);
  });
});

describe('npm run records --mode test|live', () => {
  /** The mix above (live), and a test client's delivered sale on frame JH2REJ and its failed case. */
  const seedModes = async () => {
    const live = await seedMix();
    const testSale = await attempt(
      await acceptRecord('salesRegistration', { test: true, frame: 'JH2REJ', at: minutesAgo(20) }),
      { status: 'delivered', downstreamId: '49123456', at: minutesAgo(19) },
    );
    const testCase = await attempt(await acceptRecord('caseRecord', { test: true, at: minutesAgo(15) }), {
      status: 'failed',
      error: 'UNABLE_TO_LOCK_ROW: unable to obtain exclusive access',
      at: minutesAgo(14),
    });
    return { live, testSale, testCase };
  };

  it('lists only the test clients’ records with --mode test, only the others with --mode live', async () => {
    // Prepare
    const { live, testSale, testCase } = await seedModes();
    // Act
    const test = await records(['--mode', 'test', '--json']);
    const liveRows = await records(['--mode', 'live', '--json']);
    // Assess: still the status index only, the mode a filter on the owner.
    expect(test.code).toBe(0);
    expect(ndjson(test.stdout).map((row) => row.id)).toEqual([testSale.id, testCase.id]);
    expect(
      ndjson(liveRows.stdout)
        .map((row) => row.id)
        .sort(),
    ).toEqual(
      Object.values(live)
        .map((record) => record.id)
        .sort(),
    );
    expect(new Set([...test.operations, ...liveRows.operations])).toEqual(new Set(['Query:status']));
  });

  it('combines --mode with the other filters and with --counts', async () => {
    // Prepare
    const { testCase } = await seedModes();
    // Act
    const failedTest = await records(['--mode', 'test', '--status', 'failed', '--json']);
    const otherClient = await records(['--mode', 'test', '--client', 'example-dealer', '--json']);
    const counts = await records(['--counts', '--mode', 'test', '--json']);
    // Assess
    expect(ndjson(failedTest.stdout).map((row) => row.id)).toEqual([testCase.id]);
    expect(otherClient.stdout).toBe('');
    expect(JSON.parse(counts.stdout)).toMatchObject({
      salesRegistration: { accepted: 0, delivered: 1, rejected: 0, failed: 0 },
      caseRecord: { accepted: 0, delivered: 0, rejected: 0, failed: 1 },
    });
  });

  it('with --frame decides by the record’s own test mark', async () => {
    // Prepare: the frame at a live client and at the test client.
    const { live, testSale } = await seedModes();
    // Act
    const test = await records(['--frame', 'JH2REJ', '--mode', 'test', '--json']);
    const liveRows = await records(['--frame', 'JH2REJ', '--mode', 'live', '--json']);
    // Assess
    expect(ndjson(test.stdout).map((row) => row.id)).toEqual([testSale.id]);
    expect(ndjson(liveRows.stdout).map((row) => row.id)).toEqual([live.rejected.id]);
  });

  it('refuses another mode, naming both', async () => {
    const { code, stderr } = await records(['--mode', 'sandbox']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--mode must be test or live, not "sandbox"/);
  });
});

describe('npm run records --counts', () => {
  it('counts by state per kind, as a table and as JSON, with Select COUNT per partition', async () => {
    await seedMix();
    const table = await records(['--counts']);
    const json = await records(['--counts', '--json']);
    const older = await records(['--counts', '--json', '--older-than', '45m', '--kind', 'cases']);
    expect(table.stdout).toBe(
      [
        'KIND   ACCEPTED  DELIVERED  REJECTED  FAILED  TOTAL',
        'sales  1         0          1         0       2',
        'cases  0         1          0         1       2',
        '',
        'DOWNSTREAM  HELD  REASON  SINCE (UTC)  NEXT PROBE (UTC)',
        'erp         no',
        'crm         no',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(json.stdout)).toEqual({
      salesRegistration: { accepted: 1, delivered: 0, rejected: 1, failed: 0 },
      caseRecord: { accepted: 0, delivered: 1, rejected: 0, failed: 1 },
      holds: { erp: { held: false }, crm: { held: false } },
    });
    expect(JSON.parse(older.stdout)).toEqual({
      caseRecord: { accepted: 0, delivered: 1, rejected: 0, failed: 0 },
      holds: { crm: { held: false } },
    });
    // The holds: one consistent GetItem of each hold item.
    expect(table.operations).toEqual([...Array(8).fill('Query:status'), 'GetItem', 'GetItem']);
  });

  it('shows per downstream whether it is held, why, since when and the next probe; as fields with --json', async () => {
    // Prepare: SAP held for an outage and Salesforce for its allowance, opened through the hold module's own API as
    // the workers open them; then the ERP's closed by a probe that got an answer.
    const holds = createDownstreamHolds({
      afterFailures: 5,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 5,
    });
    const t0 = new Date('2026-11-27T03:00:00.000Z');
    const failures = ['a', 'b', 'a', 'b', 'a'].map((recordId) => ({ recordId, kind: 'transient' as const }));
    await holds.noteOutcomes('erp', failures, t0);
    await holds.noteApiUsage(4_500, 5_000, new Date('2026-11-27T03:10:00.000Z'));
    // Act
    const table = await records(['--counts']);
    const json = await records(['--counts', '--json']);
    const sales = await records(['--counts', '--json', '--kind', 'sales']);
    await holds.noteOutcome(
      'erp',
      { recordId: 'c', kind: 'delivered', probe: true },
      new Date('2026-11-27T03:00:31.000Z'),
    );
    const closed = await records(['--counts', '--json']);
    // Assess
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n\n')[1]).toBe(
      [
        'DOWNSTREAM  HELD  REASON     SINCE (UTC)          NEXT PROBE (UTC)',
        'erp         yes   outage     2026-11-27 03:00:00  2026-11-27 03:00:30',
        'crm         yes   api-usage  2026-11-27 03:10:00  2026-11-27 03:10:30',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(json.stdout).holds).toEqual({
      erp: {
        held: true,
        reason: 'outage',
        heldSince: '2026-11-27T03:00:00.000Z',
        nextProbeAt: '2026-11-27T03:00:30.000Z',
      },
      crm: {
        held: true,
        reason: 'api-usage',
        heldSince: '2026-11-27T03:10:00.000Z',
        nextProbeAt: '2026-11-27T03:10:30.000Z',
      },
    });
    expect(Object.keys(JSON.parse(sales.stdout).holds)).toEqual(['erp']);
    expect(JSON.parse(closed.stdout).holds).toEqual({
      erp: { held: false },
      crm: JSON.parse(json.stdout).holds.crm,
    });
  });
});

describe('npm run records <id>', () => {
  it('shows one record in full with its history of attempts and errors, its personal fields masked', async () => {
    // Prepare
    const { failed } = await seedMix();
    // Act
    const { code, stdout, operations } = await records([failed.id]);
    // Assess
    expect(code).toBe(0);
    expect(operations).toEqual(['GetItem']);
    expect(stdout).toMatch(new RegExp(`^id:\\s+${failed.id}$`, 'm'));
    expect(stdout).toMatch(/^status:\s+failed$/m);
    expect(stdout).toMatch(/^statusKey:\s+caseRecord#failed$/m);
    expect(stdout).toMatch(/^attempts:\s+2$/m);
    expect(stdout).toMatch(new RegExp(`^  email:\\s+\\${MASK.split('').join('\\')}$`, 'm'));
    expect(stdout).toMatch(/^ {2}privacyConsent:\s+true$/m);
    const history = stdout.slice(stdout.indexOf('history:')).split('\n').slice(1, 4);
    expect(history[0]).toMatch(/^ {2}AT \(UTC\)\s+STATUS\s+REACHED\s+DOWNSTREAM ID \/ ERROR$/);
    expect(history[1]).toMatch(/^ {2}\S+ \S+\s+accepted\s+yes\s+Salesforce answered 503$/);
    expect(history[2]).toMatch(/^ {2}\S+ \S+\s+failed\s+yes\s+Salesforce answered 503$/);
    for (const value of personalValues) expect(stdout).not.toContain(value);
  });

  it('gives every stored field as one JSON object with --json, masked unless --show-personal', async () => {
    const { rejected } = await seedMix();
    const masked = JSON.parse((await records([rejected.id, '--json'])).stdout);
    const shown = JSON.parse((await records(['--id', rejected.id, '--json', '--show-personal'])).stdout);
    expect(shown).toEqual(rejected);
    expect(masked).toEqual({
      ...rejected,
      record: {
        ...rejected.record,
        Name: MASK,
        Name2: MASK,
        Street: MASK,
        Town: MASK,
        Postcode: MASK,
        email: MASK,
        Phone: MASK,
      },
    });
    expect(masked.history).toEqual([
      { at: rejected.updatedAt, status: 'rejected', reached: true, error: 'FrameNum already registered' },
    ]);
  });

  it('answers exit code 1 for an id without a record', async () => {
    const { code, stdout, stderr } = await records(['0123456789abcdef']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^npm run records: no record 0123456789abcdef in the local service \(http:/);
  });
});

describe('npm run records: bad arguments', () => {
  it.each([[['--status', 'lost']], [['--older-than', 'yesterday']], [['--nonsense']]])(
    '%j: a message, the usage, exit code 2, and nothing read',
    async (argv) => {
      const { code, stdout, stderr, operations } = await records(argv);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^npm run records: .+\nusage:\n/);
      expect(operations).toEqual([]);
    },
  );

  it('prints the usage with --help', async () => {
    const { code, stdout } = await records(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage:/);
  });
});

describe('npm run records --stage', () => {
  it('answers exit code 1 naming the table when the stage has none', async () => {
    const { code, stderr } = await records(['--stage', 'nosuchstage', '--status', 'failed']);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'npm run records: dealer-gateway-nosuchstage-records (eu-west-1): no such table (or index): check --stage and --region\n',
    );
  });

  it('reads the stage’s table dealer-gateway-<stage>-records through the SDK client', async () => {
    // Prepare: a table named as on AWS for a made-up stage, on dynalite; the SDK honours AWS_ENDPOINT_URL_DYNAMODB.
    const stage = `t${randomBytes(4).toString('hex')}`;
    const config = structuredClone(inject('serverlessConfig'));
    const table = config.resources?.Resources?.RecordsTable;
    if (!table?.Properties) throw new Error('serverless.yml has no RecordsTable');
    table.Properties.TableName = `dealer-gateway-${stage}-records`;
    await createLocalResources(
      {
        ...config,
        provider: { ...config.provider, environment: {} },
        resources: { Resources: { RecordsTable: table } },
      },
      { sqs: inject('sqsEndpoint'), dynamodb: inject('dynamoEndpoint') },
    );
    const sdk = new DynamoDBClient(localClientConfig(inject('dynamoEndpoint')));
    const TableName = `dealer-gateway-${stage}-records`;
    while ((await sdk.send(new DescribeTableCommand({ TableName }))).Table?.TableStatus !== 'ACTIVE')
      await new Promise((resolve) => setTimeout(resolve, 10));
    sdk.destroy();
    process.env.RECORDS_TABLE = TableName;
    const sale = await attempt(await acceptRecord('salesRegistration'), {
      status: 'failed',
      error: 'SAP answered 500',
      at: minutesAgo(1),
    });
    // Act
    const listed = await records(['--stage', stage, '--status', 'failed', '--json']);
    const one = await records(['--stage', stage, '--region', 'eu-west-1', sale.id, '--json']);
    // Assess
    expect(listed.code).toBe(0);
    expect(ndjson(listed.stdout).map((row) => row.id)).toEqual([sale.id]);
    expect(JSON.parse(one.stdout).id).toBe(sale.id);
    expect(
      recorder.calls.filter((call) => call.authorised[0]?.resource?.kind === 'table').at(-1)?.authorised[0]
        ?.resource,
    ).toEqual({ kind: 'table', name: TableName });
  });
});
