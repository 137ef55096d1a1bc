/**
 * The console's search under `npm start` with 100,000 records stored (contract section 7: a search by frame number
 * or id answers in ≤ 300 ms p95). The records go straight into npm start's own store, not through 100,000 HTTP
 * requests: a first `npm start` creates the table and stops; the bench opens the same data directory's store
 * (local/localStore.ts) and writes realistic settled records (sales and cases, with their personal fields, frame
 * numbers, SAP and Salesforce ids) as the store writes them (lib/store/statusRecords.ts toItem, BatchWriteItem);
 * then `npm start` again, a support user signed in with the local provider, and sequential searches over HTTP.
 *
 *   node bench/consoleSearch.ts [--records 100000] [--searches 200]   # prints the figures as JSON
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { frameKeyOf, statusKeyOf } from '../lib/records/keys.ts';
import type { RecordStatus, StatusRecord } from '../lib/records/types.ts';
import { resetSettings } from '../lib/settings/environment.ts';
import { toItem } from '../lib/store/statusRecords.ts';
import { batchPutItems } from '../lib/store/table.ts';
import { localClientConfig } from '../local/aws.ts';
import { startLocalStore } from '../local/localStore.ts';
import { type SignedIn, signInToConsole } from '../testkit/consoleSignIn.ts';
import { caseInput, salesRegistrationInput } from '../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../testkit/npmStart.ts';
import { quantile } from '../testkit/quantile.ts';

export interface ConsoleSearchFigures {
  records: number;
  seedSeconds: number;
  searches: number;
  /** Per kind of search: latencies over HTTP from the console's client side, in ms. */
  byFrame: { p50: number; p95: number };
  byId: { p50: number; p95: number };
  byDownstreamId: { p50: number; p95: number };
  /** The first page of the whole list (no filter, newest first), for information. */
  firstPage: { p50: number; p95: number };
}

const DAY_MS = 86_400_000;
const progress = (text: string) => process.stderr.write(`[console search] ${text}\n`);

/** The p-th percentile (nearest rank); 0 for none. */
const percentile = (values: number[], p: number) => (values.length === 0 ? 0 : quantile(values, p / 100));

/** A settled record as the worker leaves it: 7 in 10 sales to SAP, the rest cases to Salesforce, over 90 days. */
const settledRecord = (i: number, now: number): StatusRecord => {
  const sale = i % 10 < 7;
  const acceptedAt = new Date(now - Math.floor((i / 100_000) * 90 * DAY_MS) - (i % 1000)).toISOString();
  const updatedAt = new Date(Date.parse(acceptedAt) + 2_000).toISOString();
  const status: RecordStatus = i % 50 === 0 ? 'failed' : i % 40 === 0 ? 'rejected' : 'delivered';
  const frame = `BENCH${String(i).padStart(12, '0')}`;
  const owner = sale ? (i % 7 === 0 ? 'example-dealer-test' : 'example-dealer') : 'example-web-forms';
  const downstreamId =
    status !== 'delivered'
      ? undefined
      : sale
        ? String(40_000_000 + i)
        : `500SB${String(i).padStart(10, '0')}AAA`;
  return {
    id: randomBytes(16).toString('hex'),
    kind: sale ? 'salesRegistration' : 'caseRecord',
    status,
    statusKey: statusKeyOf(sale ? 'salesRegistration' : 'caseRecord', status),
    attempts: status === 'failed' ? 3 : 1,
    tries: status === 'failed' ? 3 : 1,
    acceptedAt,
    updatedAt,
    owner,
    ...(owner === 'example-dealer-test' ? { test: true as const } : {}),
    requestId: randomBytes(8).toString('hex'),
    record: (sale
      ? salesRegistrationInput({ FrameNum: frame })
      : caseInput({ frameNo: frame })) as unknown as StatusRecord['record'],
    ...(sale ? { frameKey: frameKeyOf(owner, frame), dealer: 1234 } : {}),
    ...(downstreamId ? { downstreamId } : {}),
    ...(status === 'delivered' ? {} : { error: 'the downstream refused the record' }),
    history: [{ at: updatedAt, status, reached: true, ...(downstreamId ? { downstreamId } : {}) }],
    eventSequence: 1,
    expiresAt: Math.floor(Date.parse(updatedAt) / 1000) + 400 * 86_400,
  };
};

/**
 * Writes `count` records into the store of `dataDir` (npm start stopped), 500 at a time (20 BatchWriteItem calls at
 * once: more makes dynalite, which updates 7 indexes per item, miss the client's 5 s deadline); what to search for.
 */
const seed = async (dataDir: string, count: number) => {
  const store = await startLocalStore(dataDir, { log: () => undefined });
  try {
    const config = localClientConfig(store.endpoint);
    const tables = await new DynamoDBClient(config).send(new ListTablesCommand({}));
    const table = tables.TableNames?.find((name) => name.endsWith('-records'));
    if (!table) throw new Error(`no records table in ${dataDir}`);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
      AWS_REGION: config.region,
      AWS_ACCESS_KEY_ID: config.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: config.credentials.secretAccessKey,
      RECORDS_TABLE: table,
    });
    resetSettings();
    const now = Date.now();
    const samples: StatusRecord[] = [];
    for (let start = 0; start < count; start += 500) {
      const records = Array.from({ length: Math.min(500, count - start) }, (_, j) =>
        settledRecord(start + j, now),
      );
      await batchPutItems(records.map(toItem));
      // Every 97th record is one the searches look for (97: every kind, state and client among them): spread over the whole table and the 90 days.
      samples.push(...records.filter((_, j) => j % 97 === 0));
      if (start % 10_000 === 0) progress(`seeded ${start + records.length} of ${count}`);
    }
    return samples;
  } finally {
    await store.close();
  }
};

/**
 * Seeds, starts npm start, signs the support user in, and times `searches` sequential searches of each kind.
 *
 * @example
 * const figures = await measureConsoleSearch({ records: 100_000, searches: 200 });
 */
export const measureConsoleSearch = async (
  options: { records: number; searches: number } = { records: 100_000, searches: 200 },
): Promise<ConsoleSearchFigures> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-console-bench-'));
  let service: RunningService | undefined;
  try {
    progress('npm start once, to create the table');
    await (await npmStart({ DATA_DIR: dataDir })).stop();
    const seedStarted = performance.now();
    const samples = await seed(dataDir, options.records);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    progress(`seeded ${options.records} records in ${seedSeconds.toFixed(0)} s; npm start again`);
    service = await npmStart({ DATA_DIR: dataDir });
    const output = service.output();
    const issuer = /^\[local\] console sign-in provider: (\S+)$/m.exec(output)?.[1] ?? '';
    const password = /^\[local\] console sign-in support@example\.com \(group \w+\): password (\S+)$/m.exec(
      output,
    )?.[1];
    const signedIn = (await signInToConsole({
      issuer,
      clientId: 'dealer-gateway-console',
      apiUrl: service.url,
      email: 'support@example.com',
      password: password ?? '',
    })) as SignedIn;
    const url = service.url;
    const timed = async (query: string, expected?: string) => {
      const started = performance.now();
      const response = await fetch(`${url}/console/api/records${query}`, {
        headers: { authorization: `Bearer ${signedIn.idToken}` },
      });
      const body = (await response.json()) as { records?: { id: string }[] };
      const took = performance.now() - started;
      if (response.status !== 200) throw new Error(`search ${query} answered ${response.status}`);
      if (expected && !body.records?.some((row) => row.id === expected))
        throw new Error(`search ${query} did not find ${expected}`);
      return took;
    };
    const run = async (label: string, queryOf: (record: StatusRecord) => string | undefined) => {
      const eligible = samples.filter((record) => queryOf(record) !== undefined);
      // A warm-up: the first calls start the handler's container.
      for (let i = 0; i < 10; i++) await timed(queryOf(eligible[i % eligible.length]) as string);
      const latencies: number[] = [];
      for (let i = 0; i < options.searches; i++) {
        const record = eligible[(i * 7) % eligible.length];
        latencies.push(await timed(queryOf(record) as string, record.id));
      }
      progress(
        `${label}: p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms`,
      );
      return { p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
    };
    const frameOf = (record: StatusRecord) =>
      record.frameKey ? `?q=${encodeURIComponent(record.frameKey.split('#')[1])}` : undefined;
    const byFrame = await run('by frame number', frameOf);
    const byId = await run('by record id', (record) => `?q=${record.id}`);
    const byDownstreamId = await run('by SAP / Salesforce id', (record) =>
      record.downstreamId ? `?q=${encodeURIComponent(record.downstreamId)}` : undefined,
    );
    const pageLatencies: number[] = [];
    for (let i = 0; i < 20; i++) pageLatencies.push(await timed(''));
    return {
      records: options.records,
      seedSeconds,
      searches: options.searches,
      byFrame,
      byId,
      byDownstreamId,
      firstPage: { p50: percentile(pageLatencies, 50), p95: percentile(pageLatencies, 95) },
    };
  } finally {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { records: { type: 'string', default: '100000' }, searches: { type: 'string', default: '200' } },
  });
  const figures = await measureConsoleSearch({
    records: Number(values.records),
    searches: Number(values.searches),
  });
  console.log(JSON.stringify(figures));
}
