import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { inject } from 'vitest';

/**
 * A vitest setup file: tees everything this test worker writes to stdout and stderr into a capture file of
 * its own under the run's capture directory (made by testkit/globalSetup.ts, which scans the files for
 * personal data when the run ends and fails it on a find).
 *
 * It catches both routes output takes: the process streams (Powertools Logger writes through a Console bound
 * to process.stdout; anything calling process.stdout.write) and the streams of the console vitest installs in
 * the worker (console.log and friends, anywhere). Each stream is wrapped once per process, however many test
 * files the worker runs.
 */

const wrapped = Symbol.for('dealer-gateway.logCapture');

type Tee = Writable & { [wrapped]?: true };

const captureFile = (directory: string): number => {
  const state = globalThis as { [wrapped]?: { directory: string; fd: number } };
  if (state[wrapped]?.directory !== directory) {
    state[wrapped] = { directory, fd: openSync(join(directory, `worker-${process.pid}.log`), 'a') };
  }
  return state[wrapped].fd;
};

const tee = (stream: Tee | undefined, fd: number): void => {
  if (!stream || typeof stream.write !== 'function' || stream[wrapped]) return;
  const write = stream.write;
  stream.write = function (this: Writable, chunk: unknown, ...rest: unknown[]) {
    try {
      if (typeof chunk === 'string') writeSync(fd, chunk);
      else if (chunk instanceof Uint8Array) writeSync(fd, chunk);
    } catch {
      // Capture must never break a test; a lost line only weakens the scan.
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Writable['write'];
  stream[wrapped] = true;
};

const directory = inject('logCaptureDir');
if (directory) {
  const fd = captureFile(directory);
  const consoleStreams = console as unknown as { _stdout?: Tee; _stderr?: Tee };
  for (const stream of [process.stdout, process.stderr, consoleStreams._stdout, consoleStreams._stderr]) {
    tee(stream as Tee | undefined, fd);
  }
}
