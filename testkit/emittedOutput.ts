/**
 * What code writes while it runs, read back as CloudWatch would: the structured log lines and the EMF metrics
 * documents (Powertools Logger and Metrics write one JSON document a line to stdout).
 */

/** The JSON documents written while `act` ran, split into log lines and metrics documents (those with `_aws`). */
export interface EmittedOutput {
  /** What `act` resolved to, or what it rejected with. */
  outcome: unknown;
  logs: Record<string, unknown>[];
  metrics: Record<string, unknown>[];
  /** The lines that are no JSON document (a library's own warnings). */
  text: string[];
}

/**
 * Runs `act` and collects every JSON line written to stdout and stderr meanwhile (still written through). The test
 * run turns Powertools metrics off (vitest.config.ts), and the shared `metrics` instance reads that when it is made:
 * a test file that reads the worker's metrics turns them on before its imports (`vi.hoisted`).
 *
 * @example
 * const { metrics } = await outputDuring(async () => tally.publish());
 * metrics.filter((document) => document.mode === 'test');
 */
export const outputDuring = async (act: () => Promise<unknown>): Promise<EmittedOutput> => {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  streams.forEach((stream, i) => {
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (writes[i] as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  });
  let outcome: unknown;
  try {
    // A rejection is never taken for success, not even one without a reason.
    outcome = await act().catch((error: unknown) => error ?? 'rejected without a reason');
  } finally {
    streams.forEach((stream, i) => {
      stream.write = writes[i];
    });
  }
  const all = lines.flatMap((text) => text.split('\n')).filter((line) => line.trim() !== '');
  const documents = all
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    outcome,
    text: all.filter((line) => !line.startsWith('{')),
    logs: documents.filter((document) => !('_aws' in document)),
    metrics: documents.filter((document) => '_aws' in document),
  };
};
