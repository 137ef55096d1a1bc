import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../local/dataDirLock.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;

describe('the data directory lock (one local stack per data directory)', () => {
  let lockFile: string;
  let lines: string[];
  const log = (line: string) => lines.push(line);
  beforeEach(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-lock-'));
    dirs.push(dir);
    lockFile = join(dir, 'dynamodb.pid');
    lines = [];
  });

  it('is taken at once when free, and released', async () => {
    const lock = await lockDataDir(lockFile, 'DIR', { log });
    expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
    expect(existsSync(lockFile)).toBe(false);
    expect(lines).toEqual([]);
  });

  it.each([
    ['its process is gone', () => `${JSON.stringify({ pid: deadPid() })}\n`],
    ['it was written by an earlier version (bare pid) whose process is gone', () => `${deadPid()}\n`],
    ['its pid now belongs to another process', () => JSON.stringify({ pid: process.pid, startTime: '1' })],
  ])('is taken over at once when %s', async (_case, content) => {
    await writeFile(lockFile, content());
    const started = Date.now();
    const lock = await lockDataDir(lockFile, 'DIR', { log });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(lines).toEqual([expect.stringMatching(/^DIR was held by a local stack that is gone \(pid \d+\)/)]);
    await lock.release();
  });

  it('refuses, after its grace, while the holder runs and is not stopping', async () => {
    const holder = await lockDataDir(lockFile, 'DIR');
    const started = Date.now();
    await expect(lockDataDir(lockFile, 'DIR', { log, runningGraceMs: 300 })).rejects.toThrow(
      `DIR is in use by another local stack (pid ${process.pid}), which is running and not stopping`,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(lines).toEqual([expect.stringContaining('waiting up to 0.3 s in case it is stopping')]);
    await holder.release();
  });

  it('waits for a holder that is stopping, however it was told to (even during the grace)', async () => {
    const holder = await lockDataDir(lockFile, 'DIR');
    const waiting = lockDataDir(lockFile, 'DIR', { log, runningGraceMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await holder.markStopping();
    setTimeout(() => void holder.release(), 700);
    const lock = await waiting;
    expect(lines).toEqual([
      expect.stringContaining('is held by a running local stack'),
      `waiting for the local stack that is stopping (pid ${process.pid}) to release DIR`,
      expect.stringMatching(/^DIR is free after \d+ ms$/),
    ]);
    await lock.release();
  });

  it('refuses when the holder is still stopping after the limit', async () => {
    const holder = await lockDataDir(lockFile, 'DIR');
    await holder.markStopping();
    await expect(lockDataDir(lockFile, 'DIR', { log, stoppingLimitMs: 300 })).rejects.toThrow(
      /still held by a local stack that has been stopping for more than 0.3 s/,
    );
    await holder.release();
  });
});
