/** Child process groups and the runner's own shutdown signals. */

/** Sends `signal` to the whole process group led by `pid` (spawned with `detached: true`). */
export function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * A repeat of the first signal within this time is the same stop, delivered twice: `npm` forwards SIGINT and
 * SIGTERM to its child, which the terminal (or `kill -- -<group>`) has signalled already.
 */
const repeatMs = 1000;

/**
 * Runs `shutdown` once on the first SIGINT / SIGTERM / SIGHUP, then exits with the code it returns. A second
 * signal while it runs exits at once with `onForce()` (e.g. SIGKILL the children first), unless it is the first
 * one again within a second.
 */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<number>, onForce: () => void) {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (first) {
      if (signal === first.signal && Date.now() - first.at < repeatMs) return;
      onForce();
      process.exit(130);
    }
    first = { signal, at: Date.now() };
    shutdown(signal).then(
      (code) => process.exit(code),
      (error) => {
        console.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        onForce();
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, handler);
}
