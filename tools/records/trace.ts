/**
 * `npm run records -- --trace <recordId|traceId>`: a record's trace as npm start kept it (local/traceReceiver.ts),
 * drawn as an indented waterfall: each span's name, its start after the trace's first span, its duration and its
 * status. A batched call is a trace of its own linked to the records it carried: it is drawn under the trace it is
 * linked to, marked `(linked)`. Reading and ordering the spans is lib/observability/keptSpans.ts's (the console's
 * record page draws the same tree).
 */
import { nanosToMs, type TraceEntry, traceStart, traceTree } from '../../lib/observability/keptSpans.ts';

const pad = (text: string, width: number) => text.padStart(width);

/**
 * The waterfall of a trace's spans: children under their parent, in start order; a linked trace's root under the
 * span it links to.
 *
 * @example
 * waterfall(spansOfTrace(spans, traceId))
 * // '+      0.0 ms     41.2 ms  ok          POST /erp/sales_registration\n+     52.3 ms    12.0 ms  error 503     deliver salesRegistration\n…'
 */
export const waterfall = (entries: readonly TraceEntry[]): string => {
  if (entries.length === 0) return '';
  const start = traceStart(entries);
  return traceTree(entries)
    .map(({ span, linked, depth }) => {
      const began = BigInt(span.startTimeUnixNano);
      const status = span.status === 2 ? 'error' : 'ok';
      const http = span.attributes['http.response.status_code'];
      const state = `${status}${http === undefined ? '' : ` ${http}`}`.padEnd(10);
      const links = span.links.length > 1 ? ` [${span.links.length} records]` : '';
      return `+${pad(nanosToMs(began - start).toFixed(1), 9)} ms ${pad(nanosToMs(BigInt(span.endTimeUnixNano) - began).toFixed(1), 9)} ms  ${state}  ${'  '.repeat(depth)}${span.name}${linked ? ' (linked)' : ''}${links}`;
    })
    .join('\n');
};
