/** Port helpers: free ports, "is it taken", and waiting for an HTTP server to answer. */
import { type AddressInfo, createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const host = '127.0.0.1';

/**
 * `count` distinct ports that were free a moment ago: the OS picks them, all held open together so none
 * repeats. A tiny race remains until whoever gets them binds them.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.unref();
          server.once('error', reject);
          server.listen(0, host, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** How long a port that is in use is waited for: a stopping local stack releases its port within seconds. */
export const portWaitMs = 10_000;

/**
 * Resolves once nothing listens on `port` (on any local address). While something does, waits for it to be
 * released, saying so once, for up to `timeoutMs` (default `portWaitMs`), then rejects with a clear message.
 */
export async function waitForPortFree(
  port: number,
  options: { timeoutMs?: number; signal?: AbortSignal; log?: (line: string) => void } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? portWaitMs;
  const log = options.log ?? ((line: string) => process.stderr.write(`[local] ${line}\n`));
  const started = Date.now();
  for (let waiting = false; ; waiting = true) {
    options.signal?.throwIfAborted();
    if (!(await portInUse(port))) {
      if (waiting) log(`port ${port} is free after ${Date.now() - started} ms`);
      return;
    }
    if (Date.now() - started >= timeoutMs) {
      throw new Error(
        `port ${port} is in use${waiting ? ` (still, after ${timeoutMs / 1000} s)` : ''}: stop whatever listens there or set PORT to another port`,
      );
    }
    if (!waiting) {
      log(
        `port ${port} is in use: waiting up to ${timeoutMs / 1000} s for it to be released (a local stack that is stopping releases it within seconds)`,
      );
    }
    await sleep(100);
  }
}

/** Whether something listens on `port`, tried by listening there. */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(true);
      else reject(error);
    });
    // No host: binds the unspecified address, so it also collides with listeners on 127.0.0.1 or ::1.
    server.listen(port, () => server.close(() => resolve(false)));
  });
}

/**
 * Polls `url` until the server answers with any HTTP status. Rejects after `timeoutMs`, or as soon as
 * `signal` aborts (e.g. the server process exited) with the abort reason.
 */
export async function waitForHttp(url: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    signal.throwIfAborted();
    try {
      const attemptTimeout = AbortSignal.timeout(Math.max(1, Math.min(15_000, deadline - Date.now())));
      const response = await fetch(url, { signal: AbortSignal.any([signal, attemptTimeout]) });
      await response.body?.cancel();
      return;
    } catch (error) {
      lastError = error;
    }
    await sleep(50, undefined, { signal }).catch(() => {});
  }
  signal.throwIfAborted();
  const cause = lastError instanceof Error ? (lastError.cause ?? lastError) : lastError;
  throw new Error(
    `${url} did not answer within ${Math.round(timeoutMs / 1000)} s (last error: ${String(cause)})`,
  );
}
