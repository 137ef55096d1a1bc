/**
 * One local stack per data directory. LevelDB allows one process per directory, and dynalite crashes the process
 * (an unhandled stream error) instead of reporting a held lock; two stacks on one directory would also corrupt
 * it. So the stack claims the directory first with a lock file that names it: its pid, the pid's start time
 * (a reused pid is not mistaken for it) and whether it is stopping.
 *
 * A stack started while another holds the lock:
 * - takes the lock over at once if that process is gone, or dead and not yet reaped (a zombie, as after SIGKILL:
 *   its LevelDB lock went with it);
 * - waits while it is stopping (it marks the file when it gets SIGINT, SIGTERM or SIGHUP, or `stop()` is called),
 *   up to `stoppingLimitMs`;
 * - waits `runningGraceMs` while it is running (a stop signal may be on its way), then refuses.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a running (not stopping) holder is given to start stopping before the new stack refuses. */
export const runningGraceMs = 3000;
/** How long a stopping holder is waited for. Its stop takes a few seconds (serverless-offline: 5 s at most). */
export const stoppingLimitMs = 30_000;

export interface DataDirLock {
  /**
   * Whether the directory was taken over from a stack that died without a clean stop (its lock file was left
   * behind, or left half-written): what it was writing may be half done.
   */
  readonly previousHolderDied: boolean;
  /** Marks the lock as held by a stack that is stopping, so that a new stack waits for it rather than refuse. */
  markStopping(): Promise<void>;
  /** Removes the lock file (after markStopping, if that is still writing). */
  release(): Promise<void>;
}

export interface LockOptions {
  /** Aborting it ends the wait. */
  signal?: AbortSignal;
  /** Where the waiting is told. Default: stderr, as `[local] <line>`. */
  log?: (line: string) => void;
  /** Default `runningGraceMs`. */
  runningGraceMs?: number;
  /** Default `stoppingLimitMs`. */
  stoppingLimitMs?: number;
}

interface Holder {
  pid: number;
  /** From /proc/<pid>/stat, where there is one. */
  startTime?: string;
  stopping?: boolean;
}

/**
 * Claims `lockFile` for this process, waiting for a stack that is stopping or dying (see above). `what` names the
 * directory in messages.
 */
export async function lockDataDir(
  lockFile: string,
  what: string,
  options: LockOptions = {},
): Promise<DataDirLock> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[local] ${line}\n`));
  const { runningGraceMs: runningGrace = runningGraceMs, stoppingLimitMs: stoppingLimit = stoppingLimitMs } =
    options;
  const me: Holder = { pid: process.pid, startTime: inspectProcess(process.pid).startTime };
  const waitStarted = Date.now();
  let waited = false;
  /** The holder being waited for: since when it was seen, and since when it is stopping. */
  let seen: { pid: number; since: number; stoppingSince?: number } | undefined;
  let unreadableSince: number | undefined;
  let previousHolderDied = false;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      await writeFile(lockFile, serialize(me), { flag: 'wx' });
      if (waited) log(`${what} is free after ${Date.now() - waitStarted} ms`);
      return handle(lockFile, me, previousHolderDied);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder(lockFile);
    const now = Date.now();
    if (holder === 'missing') continue; // released a moment ago
    if (holder === 'unreadable') {
      // Being written (the exclusive create and the write are two steps), or left half-written by a crash.
      unreadableSince ??= now;
      if (now - unreadableSince > 1000) {
        await rm(lockFile, { force: true });
        previousHolderDied = true;
        unreadableSince = undefined;
      } else await sleep(50);
      continue;
    }
    unreadableSince = undefined;
    const state = inspectProcess(holder.pid);
    if (!state.alive || (holder.startTime && state.startTime && holder.startTime !== state.startTime)) {
      log(`${what} was held by a local stack that is gone (pid ${holder.pid}): taking it over`);
      await rm(lockFile, { force: true });
      previousHolderDied = true;
      continue;
    }
    waited = true;
    if (seen?.pid !== holder.pid) {
      seen = { pid: holder.pid, since: now };
      if (!holder.stopping) {
        log(
          `${what} is held by a running local stack (pid ${holder.pid}): waiting up to ${runningGrace / 1000} s in case it is stopping`,
        );
      }
    }
    if (holder.stopping) {
      if (seen.stoppingSince === undefined) {
        seen.stoppingSince = now;
        log(`waiting for the local stack that is stopping (pid ${holder.pid}) to release ${what}`);
      } else if (now - seen.stoppingSince > stoppingLimit) {
        throw new Error(
          `${what} is still held by a local stack that has been stopping for more than ${stoppingLimit / 1000} s (pid ${holder.pid}); wait for it or kill it, or set DATA_DIR to another directory`,
        );
      }
    } else if (now - seen.since > runningGrace) {
      throw new Error(
        `${what} is in use by another local stack (pid ${holder.pid}), which is running and not stopping; stop it, or set DATA_DIR to another directory`,
      );
    }
    await sleep(50);
  }
}

function handle(lockFile: string, me: Holder, previousHolderDied: boolean): DataDirLock {
  let marking: Promise<void> | undefined;
  let released: Promise<void> | undefined;
  return {
    previousHolderDied,
    markStopping() {
      // Replaced whole (rename), so that a reader never sees it half-written.
      marking ??= (async () => {
        if (released) return;
        const temporary = `${lockFile}.${process.pid}.tmp`;
        await writeFile(temporary, serialize({ ...me, stopping: true }));
        await rename(temporary, lockFile);
      })().catch(() => {});
      return marking;
    },
    release() {
      released ??= (async () => {
        await marking;
        await rm(lockFile, { force: true });
      })();
      return released;
    },
  };
}

function serialize(holder: Holder): string {
  return `${JSON.stringify(holder)}\n`;
}

async function readHolder(lockFile: string): Promise<Holder | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    // Earlier versions wrote the bare pid.
    const parsed: unknown = JSON.parse(text);
    const holder = typeof parsed === 'number' ? { pid: parsed } : (parsed as Holder);
    return Number.isInteger(holder?.pid) && holder.pid > 0 ? holder : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

const procfs = existsSync('/proc/self/stat');

/** Whether `pid` runs (a zombie does not), and its start time where /proc tells it. */
function inspectProcess(pid: number): { alive: boolean; startTime?: string } {
  if (procfs) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "pid (comm) ": state is field 3, starttime field 22.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { alive: fields[0] !== 'Z' && fields[0] !== 'X', startTime: fields[19] };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { alive: false };
    }
  }
  try {
    process.kill(pid, 0);
    return { alive: true };
  } catch (error) {
    return { alive: (error as NodeJS.ErrnoException).code === 'EPERM' };
  }
}
