/** serverless-offline (`osls offline start --stage local`) as a child process in its own process group. */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { killGroup } from './processes.ts';
import { localStage, oslsScript, projectRoot } from './project.ts';

const guard = new URL('./orphanGuard.ts', import.meta.url).href;
const warmPool = new URL('./warmPool.ts', import.meta.url).href;
// The body as API Gateway hands it to the handlers: the text as received (local/emulators/serverlessOffline/rawBody.ts says why).
const rawBody = new URL('./emulators/serverlessOffline/rawBody.ts', import.meta.url).href;
// A handler's webhook call goes where npm start sends the client's webhooks (the console's resend: local/webhookRedirect.ts).
const webhookRedirect = new URL('./webhookRedirect.ts', import.meta.url).href;
const outputLimit = 64 * 1024;

export interface OfflineExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set if the process could not be spawned at all. */
  error?: Error;
}

export interface OfflineProcess {
  pid: number;
  /** Settles (never rejects) once the process has exited. */
  exited: Promise<OfflineExit>;
  /** The last 64 KiB of its stdout and stderr, interleaved. */
  output(): string;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<OfflineExit>;
}

export function describeExit({ code, signal, error }: OfflineExit): string {
  if (error) return `could not be started: ${error.message}`;
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/**
 * `env` is the complete environment (PORT, OFFLINE_LAMBDA_PORT, ... included). With `debug`, its output
 * goes to our stderr as it comes (stdout stays reserved for the ready line); otherwise it is only kept.
 */
export function startOffline(env: NodeJS.ProcessEnv, debug: boolean): OfflineProcess {
  const child = spawn(
    process.execPath,
    [
      '--import',
      guard,
      '--import',
      warmPool,
      '--import',
      rawBody,
      '--import',
      webhookRedirect,
      oslsScript,
      'offline',
      'start',
      '--stage',
      localStage,
    ],
    {
      cwd: projectRoot,
      env: { ...env, LOCAL_STACK_PARENT_FD: '3' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (stream: Readable | null) => {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      output = (output + chunk).slice(-outputLimit);
      if (debug) process.stderr.write(chunk);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  // fd 3: the child's orphan guard watches it; we never write to it. Keep it from holding our loop open.
  const lifeline = child.stdio[3] as (Readable & { unref?: () => void }) | null;
  lifeline?.on('error', () => {});
  lifeline?.unref?.();

  const exited = new Promise<OfflineExit>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const pid = child.pid ?? 0;

  return {
    pid,
    exited,
    output: () => output,
    async stop(graceMs = 5000) {
      if (pid && child.exitCode === null && child.signalCode === null) killGroup(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        exited,
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), graceMs);
        }),
      ]);
      clearTimeout(timer);
      // Whatever is left of the group (the leader, or anything it spawned) goes now.
      if (pid) killGroup(pid, 'SIGKILL');
      return result ?? (await exited);
    },
  };
}
