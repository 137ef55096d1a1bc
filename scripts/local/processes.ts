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
 * Runs `shutdown` once on the first SIGINT / SIGTERM / SIGHUP, then exits with the code it returns. A second
 * signal while it runs exits at once with `onForce()` (e.g. SIGKILL the children first).
 */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<number>, onForce: () => void) {
  let shuttingDown = false;
  const handler = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      onForce();
      process.exit(130);
    }
    shuttingDown = true;
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
