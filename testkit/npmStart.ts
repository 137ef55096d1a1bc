import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from '../local/ports.ts';

export interface RunningService {
  url: string;
  keys: Record<string, string>;
  process: ChildProcess;
  /** Milliseconds from spawn to the `ready:` line. */
  readyAfterMs: number;
  output: () => string;
  /** SIGTERM, then resolves once npm has exited: true when it stopped cleanly (exit 0, or npm ended by the signal). */
  stop: () => Promise<boolean>;
}

/**
 * Starts the service as a person does, `npm start`, on a free port (or `PORT` if given) with its own data
 * directory, and waits for its `ready:` line.
 *
 * @example
 * const service = await npmStart({ DATA_DIR: dir });
 * await fetch(`${service.url}/crm/case`, …);
 */
export const npmStart = async (
  env: Record<string, string> & { DATA_DIR: string },
): Promise<RunningService> => {
  const port = env.PORT ? Number(env.PORT) : (await freePorts(1))[0];
  const started = Date.now();
  // Only the caller's settings: nothing of the test worker's own (its AWS endpoints, queue URLs) leaks in.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(AWS_|SALES_|CASE_|RECORDS_|ERP_|CRM_|API_KEYS_|DELIVERY_)/.test(k),
    ),
  );
  const child = spawn('npm', ['start'], {
    env: { ...inherited, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a terminal gives it: stop() signals the group, as Ctrl-C or a service manager do.
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<boolean>((resolve) =>
    child.once('exit', (code, signal) => resolve(code === 0 || (code === null && signal === 'SIGTERM'))),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start not ready in 60 s:\n${output}`)), 60_000);
    const check = () => {
      if (/^ready: http:\/\/localhost:\d+$/m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    exited.then(() => reject(new Error(`npm start exited:\n${output}`)));
  });
  const url = /^ready: (http:\/\/localhost:\d+)$/m.exec(output)?.[1] ?? '';
  return {
    url,
    keys: JSON.parse(readFileSync(join(env.DATA_DIR, 'api-keys.json'), 'utf8')),
    process: child,
    readyAfterMs: Date.now() - started,
    output: () => output,
    stop: async () => {
      const group = -(child.pid as number);
      process.kill(group, 'SIGTERM');
      const clean = await exited;
      // npm exits at once; the runner then stops its children and emulators: wait for the whole group.
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(group, 0);
        } catch {
          return clean;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`npm start's processes still run 10 s after SIGTERM:\n${output}`);
    },
  };
};
