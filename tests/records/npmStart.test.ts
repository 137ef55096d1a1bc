import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';
import { MASK } from '../../tools/records/constants.ts';

/*
 * The issue's own example, end to end: a sale the SAP sandbox refuses (its frame number registered twice) is found
 * by `npm run records -- --status rejected` against the running `npm start`.
 */

let service: RunningService;
let stopped = false;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'records-start-'));
  service = await npmStart({ DATA_DIR: dataDir });
}, 90_000);
afterAll(async () => {
  if (service && !stopped) await service.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const postSale = async (record: Record<string, unknown>): Promise<string> => {
  const response = await fetch(`${service.url}/erp/sales_registration`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
    body: JSON.stringify([record]),
  });
  const body = (await response.json()) as { registrations: { id: string }[] };
  return body.registrations[0].id;
};

/** Polls the status look-up until the record leaves `accepted`. */
const settled = async (id: string): Promise<string> => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await fetch(`${service.url}/erp/sales_registration/${id}`, {
      headers: { 'x-api-key': service.keys['example-dealer'] },
    });
    const { status } = (await response.json()) as { status: string };
    if (status !== 'accepted' || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** `npm <args>` in the project, reading this file's npm start (its DATA_DIR), without the test run's npm settings. */
const npm = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(npm_|AWS_|RECORDS_)/i.test(name)),
    );
    execFile('npm', args, { env: { ...env, DATA_DIR: dataDir }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('npm run records against npm start', () => {
  it('finds the sale SAP refused (frame number registered twice) by state, by frame number and by id', async () => {
    // Prepare: a sale delivered, then another sale of the same frame with other content, which SAP refuses.
    const frame = uniqueFrame('REC');
    const first = await postSale(salesRegistrationInput({ FrameNum: frame }));
    expect(await settled(first)).toBe('delivered');
    const second = await postSale(salesRegistrationInput({ FrameNum: frame, SaleDate: '2026-11-21' }));
    expect(await settled(second)).toBe('rejected');
    // Act
    const byState = await npm('run', 'records', '--', '--status', 'rejected');
    const byFrame = await npm('run', '-s', 'records', '--', '--frame', frame, '--json');
    const one = await npm('run', '-s', 'records', '--', second, '--json');
    // Assess
    expect(byState.code).toBe(0);
    const row = byState.stdout.split('\n').find((line) => line.startsWith(second));
    expect(row).toMatch(
      new RegExp(`^${second}\\s+sales\\s+rejected\\s+example-dealer\\s+1234\\s+${frame}\\s+1\\s`),
    );
    expect(row).toContain(`Frame number ${frame} is already registered`);
    const rows = byFrame.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((r) => [r.id, r.status])).toEqual([
      [first, 'delivered'],
      [second, 'rejected'],
    ]);
    const record = JSON.parse(one.stdout);
    expect(record).toMatchObject({ id: second, status: 'rejected', statusKey: 'salesRegistration#rejected' });
    expect(record.history).toEqual([
      {
        at: record.updatedAt,
        status: 'rejected',
        reached: true,
        error: expect.stringContaining(`Frame number ${frame} is already registered`),
      },
    ]);
    expect(record.record).toMatchObject({ FrameNum: frame, DealerId: 1234, Name: MASK, email: MASK });
  }, 90_000);

  it('says no local service is running once npm start has stopped (exit code 1)', async () => {
    stopped = true;
    await service.stop();
    const { code, stderr } = await npm('run', 'records', '--', '--status', 'rejected');
    expect(code).toBe(1);
    expect(stderr).toContain('no running local service');
  }, 60_000);
});
