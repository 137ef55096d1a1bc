/**
 * `npm start` as the soak runs it: a child process in its own process group (as a terminal gives it), on one port
 * and one data directory for the whole campaign, killed with SIGKILL of its whole group and started again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../local/project.ts';

const outputLimit = 256 * 1024;
const readyTimeoutMs = 120_000;

export interface ServiceOptions {
  port: number;
  dataDir: string;
  /** The service's settings (ERP_BASE_URL, DELIVERY_*, LOCAL_API_PROXY_*, ...), on top of a clean environment. */
  env: Record<string, string>;
  log: (line: string) => void;
  /** Every whole line the service writes (stdout and stderr): for what its log says (holdWatch.ts). */
  onLine?: (line: string) => void;
}

export interface Service {
  /** http://127.0.0.1:<port>: the same across restarts. */
  url: string;
  /** API keys by client name (read from the data directory after the first start). */
  keys(): Record<string, string>;
  /** Whether the service answers now (between `ready:` and a kill). */
  isUp(): boolean;
  /** Resolves once the service is up (at once when it is). Rejects once the campaign gave up on it. */
  whenUp(): Promise<void>;
  /** Gives up on the service: whoever waits for it (and will) gets `error`. */
  abandon(error: Error): void;
  start(): Promise<void>;
  /** SIGKILL to the whole process group; resolves once its port is released. */
  kill(): Promise<void>;
  /** SIGTERM to the whole process group, as Ctrl-C; resolves once everything has gone. */
  stop(): Promise<void>;
  /** Start-ups, and exits nobody asked for. */
  stats(): { starts: number; kills: number; unexpectedExits: number; startMs: number[] };
  /** The last 256 KiB of its output. */
  output(): string;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

export const createService = (options: ServiceOptions): Service => {
  const url = `http://127.0.0.1:${options.port}`;
  let child: ChildProcess | undefined;
  let up = false;
  let output = '';
  let keys: Record<string, string> = {};
  let expectedExit = false;
  let upWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let failed: Error | undefined;
  const stats = { starts: 0, kills: 0, unexpectedExits: 0, startMs: [] as number[] };

  // Only the soak's settings: nothing of the caller's own AWS endpoints, queue URLs or downstreams leaks in.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) =>
        !/^(AWS_|SALES_|CASE_|RECORDS_|ERP_|CRM_|API_KEYS_|DELIVERY_|LOCAL_|RECONCILE_|POWERTOOLS_|DEBUG$)/.test(
          key,
        ),
    ),
  );

  const markUp = () => {
    up = true;
    for (const waiter of upWaiters) waiter.resolve();
    upWaiters = [];
  };
  const fail = (error: Error) => {
    failed = error;
    for (const waiter of upWaiters) waiter.reject(error);
    upWaiters = [];
  };

  const start = async (): Promise<void> => {
    const started = Date.now();
    expectedExit = false;
    const spawned = spawn('npm', ['start'], {
      cwd: projectRoot,
      env: { ...inherited, ...options.env, DATA_DIR: options.dataDir, PORT: String(options.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child = spawned;
    let stdout = '';
    // Each stream's unfinished last line, until its end comes (chunks split lines anywhere).
    const partial = { out: '', err: '' };
    const lines = (stream: 'out' | 'err', chunk: Buffer) => {
      if (!options.onLine) return;
      const parts = (partial[stream] + chunk.toString()).split('\n');
      partial[stream] = parts.pop() ?? '';
      for (const line of parts) options.onLine(line);
    };
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-outputLimit);
    };
    spawned.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      collect(chunk);
      lines('out', chunk);
    });
    spawned.stderr?.on('data', (chunk: Buffer) => {
      collect(chunk);
      lines('err', chunk);
    });
    const exited = new Promise<void>((resolve) => spawned.once('exit', () => resolve()));
    let ready = false;
    exited.then(() => {
      if (child !== spawned || !ready) return; // an exit during start-up is start()'s failure
      up = false;
      if (!expectedExit) {
        stats.unexpectedExits++;
        options.log(`npm start exited by itself; starting it again\n${output.slice(-4000)}`);
        start().catch(fail);
      }
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`npm start not ready in 120 s:\n${output}`)),
        readyTimeoutMs,
      );
      const check = () => {
        if (/^ready: http:\/\/localhost:\d+$/m.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      };
      spawned.stdout?.on('data', check);
      exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`npm start exited before it was ready:\n${output.slice(-8000)}`));
      });
    });
    keys = JSON.parse(readFileSync(join(options.dataDir, 'api-keys.json'), 'utf8')) as Record<string, string>;
    ready = true;
    stats.starts++;
    stats.startMs.push(Date.now() - started);
    markUp();
  };

  /** Waits until the whole group has gone and nothing listens on the port (offline's guard follows the runner). */
  const gone = async (pid: number, what: string) => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (!groupAlive(pid) && !(await listening(options.port))) return;
      await sleep(100);
    }
    throw new Error(`npm start's ${what}: port ${options.port} or its processes still busy after 20 s`);
  };

  return {
    url,
    keys: () => keys,
    isUp: () => up,
    whenUp: () => {
      if (failed) return Promise.reject(failed);
      if (up) return Promise.resolve();
      return new Promise((resolve, reject) => upWaiters.push({ resolve, reject }));
    },
    abandon: fail,
    start,
    async kill() {
      const pid = child?.pid;
      if (!pid) return;
      expectedExit = true;
      up = false;
      stats.kills++;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await gone(pid, 'kill');
    },
    async stop() {
      const pid = child?.pid;
      if (!pid) return;
      expectedExit = true;
      up = false;
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        return;
      }
      await gone(pid, 'stop').catch(() => {
        // Whatever is left of it goes now.
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {}
      });
    },
    stats: () => ({ ...stats, startMs: [...stats.startMs] }),
    output: () => output,
  };
};
