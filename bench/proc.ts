/**
 * Child processes for the benchmarks: one-shot Node scripts that print a JSON result as their last stdout line,
 * and servers that print one JSON line when they listen. Every child is ended by its own pid, never by name.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = dirname(fileURLToPath(import.meta.url));
export const projectRoot = join(benchDir, '..');

/** The environment every child starts from: this one without NODE_OPTIONS (each child says what it runs with). */
export const baseEnv = (): NodeJS.ProcessEnv => {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  return env;
};

/** {@link baseEnv} without any AWS_* setting of the caller's (profiles, real credentials, endpoints). */
export const awsFreeEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(baseEnv()).filter(([name]) => !name.startsWith('AWS_')));

/** What the handlers see in every benchmark: metrics and logging are not what is measured. */
export const quietPowertools = {
  POWERTOOLS_SERVICE_NAME: 'dealer-gateway',
  POWERTOOLS_METRICS_NAMESPACE: 'DealerGateway',
  POWERTOOLS_METRICS_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'ERROR',
} as const;

const collect = (child: ChildProcess) => {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
};

/**
 * Runs `node <args>` to its end and returns the JSON of its last stdout line.
 *
 * @example
 * const { ms } = await runNodeJson<{ ms: number }>(['-e', 'console.log(JSON.stringify({ ms: 1 }))']);
 */
export const runNodeJson = async <T>(args: string[], env: NodeJS.ProcessEnv = baseEnv()): Promise<T> => {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    throw new Error(
      `node ${args.slice(0, 2).join(' ')} exited with ${code ?? signal}:\n${output.stderr().slice(-4000)}`,
    );
  }
  const lines = output.stdout().trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as T;
};

export interface ServerProcess<T> {
  /** What the server printed when it started listening. */
  info: T;
  pid: number;
  /** Ends this child (SIGTERM to its pid) and waits for it. */
  stop(): Promise<void>;
}

/**
 * Starts `node <script>` as a server and waits for the JSON line it prints once it listens.
 *
 * @example
 * const aws = await startNodeServer<{ endpoint: string }>(join(benchDir, 'instantAws.ts'));
 * await aws.stop();
 */
export const startNodeServer = async <T>(
  script: string,
  env: NodeJS.ProcessEnv = baseEnv(),
  args: string[] = [],
): Promise<ServerProcess<T>> => {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collect(child);
  const exited = once(child, 'exit');
  const info = await new Promise<T>((resolve, reject) => {
    const onData = () => {
      const text = output.stdout();
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      child.stdout?.off('data', onData);
      try {
        resolve(JSON.parse(text.slice(0, newline)) as T);
      } catch (error) {
        reject(error);
      }
    };
    child.stdout?.on('data', onData);
    void exited.then(([code]) =>
      reject(new Error(`${script} exited with ${code} before listening:\n${output.stderr().slice(-4000)}`)),
    );
  });
  return {
    info,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid as number, 'SIGTERM');
        await exited;
      }
    },
  };
};

/** Prints the one JSON line a server child announces itself with, and ends on SIGTERM / SIGINT. */
export const announce = (info: unknown, close: () => Promise<void> | void): void => {
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const stop = async () => {
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
};

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
