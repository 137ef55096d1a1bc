/**
 * `npm run records -- --trace <recordId|traceId>`: a record's trace as npm start kept it (local/traceReceiver.ts),
 * drawn as an indented waterfall: each span's name, its start after the trace's first span, its duration and its
 * status. A batched call is a trace of its own linked to the records it carried: it is drawn under the trace it is
 * linked to, marked `(linked)`.
 */
import { readFile } from 'node:fs/promises';
import type { KeptSpan } from '../../local/traceReceiver.ts';

/** Every span kept in a traces file (none when there is no file yet). */
export const readKeptSpans = async (file: string): Promise<KeptSpan[]> => {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as KeptSpan];
      } catch {
        return []; // a line cut off by a crash
      }
    });
};

/** The spans of a trace, and those of the traces linked to it (a batched call and its requests). */
export const spansOfTrace = (
  spans: readonly KeptSpan[],
  traceId: string,
): { span: KeptSpan; linked: boolean }[] => {
  const own = spans.filter((span) => span.traceId === traceId);
  const linkedTraces = new Set(
    spans
      .filter((span) => span.traceId !== traceId && span.links.some((link) => link.traceId === traceId))
      .map((span) => span.traceId),
  );
  return [
    ...own.map((span) => ({ span, linked: false })),
    ...spans.filter((span) => linkedTraces.has(span.traceId)).map((span) => ({ span, linked: true })),
  ];
};

const ms = (nanos: bigint) => Number(nanos / 1000n) / 1000;
const pad = (text: string, width: number) => text.padStart(width);

/**
 * The waterfall of a trace's spans: children under their parent, in start order; a linked trace's root under the
 * span it links to.
 *
 * @example
 * waterfall(spansOfTrace(spans, traceId))
 * // '+      0.0 ms     41.2 ms  ok          POST /erp/sales_registration\n+     52.3 ms    12.0 ms  error 503     deliver salesRegistration\n…'
 */
export const waterfall = (entries: readonly { span: KeptSpan; linked: boolean }[]): string => {
  if (entries.length === 0) return '';
  const start = entries.reduce(
    (least, { span }) => (BigInt(span.startTimeUnixNano) < least ? BigInt(span.startTimeUnixNano) : least),
    BigInt(entries[0].span.startTimeUnixNano),
  );
  const ids = new Set(entries.map(({ span }) => span.spanId));
  const children = new Map<string, { span: KeptSpan; linked: boolean }[]>();
  const roots: { span: KeptSpan; linked: boolean }[] = [];
  for (const entry of entries) {
    const { span } = entry;
    // A linked call hangs under the first span of this trace it links to.
    const anchor = entry.linked
      ? span.parentSpanId && ids.has(span.parentSpanId)
        ? span.parentSpanId
        : span.links.find((link) => ids.has(link.spanId))?.spanId
      : span.parentSpanId;
    if (anchor && ids.has(anchor)) children.set(anchor, [...(children.get(anchor) ?? []), entry]);
    else roots.push(entry);
  }
  const byStart = (a: { span: KeptSpan }, b: { span: KeptSpan }) =>
    BigInt(a.span.startTimeUnixNano) < BigInt(b.span.startTimeUnixNano) ? -1 : 1;
  const lines: string[] = [];
  const draw = (entry: { span: KeptSpan; linked: boolean }, depth: number) => {
    const { span } = entry;
    const began = BigInt(span.startTimeUnixNano);
    const status = span.status === 2 ? 'error' : 'ok';
    const http = span.attributes['http.response.status_code'];
    const state = `${status}${http === undefined ? '' : ` ${http}`}`.padEnd(10);
    const links = span.links.length > 1 ? ` [${span.links.length} records]` : '';
    lines.push(
      `+${pad(ms(began - start).toFixed(1), 9)} ms ${pad(ms(BigInt(span.endTimeUnixNano) - began).toFixed(1), 9)} ms  ${state}  ${'  '.repeat(depth)}${span.name}${entry.linked ? ' (linked)' : ''}${links}`,
    );
    for (const child of (children.get(span.spanId) ?? []).sort(byStart)) draw(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) draw(root, 0);
  return lines.join('\n');
};
