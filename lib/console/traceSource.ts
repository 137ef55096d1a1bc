import { keptSpansOfTrace, type TraceEntry } from '../observability/keptSpans.ts';
import { keptTracesFile } from '../settings/settings.ts';

/** Where the console reads a trace's spans (and those of the batched calls linked to it). */
export interface TraceSource {
  spansOf(traceId: string): Promise<TraceEntry[]>;
}

/**
 * The trace source of this environment: npm start's kept spans (`TRACES_FILE`), or none. On AWS the spans are in
 * CloudWatch / X-Ray; reading them back (X-Ray's BatchGetTraces, a REST API the project's AWS client seam does not
 * speak, with segment documents to map back to spans) is not built: the record page says so and names the trace id.
 *
 * @example
 * traceSource({ TRACES_FILE: '.data/traces.jsonl' })?.spansOf('4bf92f3577b34da6a3ce929d0e0e4736')
 */
export const traceSource = (env?: Record<string, string | undefined>): TraceSource | undefined => {
  const file = keptTracesFile(env);
  return file ? { spansOf: (traceId) => keptSpansOfTrace(file, traceId) } : undefined;
};
