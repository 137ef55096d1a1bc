/**
 * The spans `npm start` keeps (local/traceReceiver.ts writes them, one JSON span a line) and a trace drawn from
 * them: read by `npm run records -- --trace` (tools/records/trace.ts) and the console's record page
 * (lib/console/traceRequest.ts). No OpenTelemetry import: the console API's bundle does not load the SDK for it.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/** One span as kept: OTLP's fields, ids in hex, attributes flattened to values. */
export interface KeptSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  /** Nanoseconds since the epoch, as text (beyond a double's precision). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  service?: string;
}

/** A span of a trace as drawn: `linked` when it belongs to a trace linked to it (a batched call). */
export interface TraceEntry {
  span: KeptSpan;
  linked: boolean;
}

const parsed = (line: string): KeptSpan[] => {
  if (line.trim() === '') return [];
  try {
    return [JSON.parse(line) as KeptSpan];
  } catch {
    return []; // a line cut off by a crash
  }
};

/** Every span kept in a traces file (none when there is no file yet). */
export const readKeptSpans = async (file: string): Promise<KeptSpan[]> => {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').flatMap(parsed);
};

/** The spans of a file whose line holds one of `needles` (a trace id is in its spans' and its links' lines). */
const spansMentioning = async (file: string, needles: readonly string[]): Promise<KeptSpan[]> => {
  const found: KeptSpan[] = [];
  if (needles.length === 0) return found;
  const input = createReadStream(file, { encoding: 'utf8' });
  const opened = await new Promise<boolean>((resolve) => {
    input.once('open', () => resolve(true));
    input.once('error', () => resolve(false));
  });
  if (!opened) return found;
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }))
    if (needles.some((needle) => line.includes(needle))) found.push(...parsed(line));
  return found;
};

/** The spans of a trace, and those of the traces linked to it (a batched call and its requests). */
export const spansOfTrace = (spans: readonly KeptSpan[], traceId: string): TraceEntry[] => {
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

/**
 * {@link spansOfTrace} read from a traces file without parsing it whole: one pass for the lines naming the trace
 * (its spans, and the batched calls linking to it), one for the lines of the linked traces. The file grows with
 * every record npm start ever took; a record's page must not parse all of it.
 *
 * @example
 * await keptSpansOfTrace('.data/traces.jsonl', '4bf92f3577b34da6a3ce929d0e0e4736') // [{ span, linked: false }, …]
 */
export const keptSpansOfTrace = async (file: string, traceId: string): Promise<TraceEntry[]> => {
  const naming = await spansMentioning(file, [traceId]);
  const linkedTraces = [
    ...new Set(
      naming
        .filter((span) => span.traceId !== traceId && span.links.some((link) => link.traceId === traceId))
        .map((span) => span.traceId),
    ),
  ];
  const linked = await spansMentioning(file, linkedTraces);
  return spansOfTrace([...naming.filter((span) => span.traceId === traceId), ...linked], traceId);
};

/**
 * A trace's spans in drawing order with their depth: children under their parent, in start order; a linked trace's
 * root under the first span of this trace it links to.
 */
export const traceTree = (entries: readonly TraceEntry[]): (TraceEntry & { depth: number })[] => {
  const ids = new Set(entries.map(({ span }) => span.spanId));
  const children = new Map<string, TraceEntry[]>();
  const roots: TraceEntry[] = [];
  for (const entry of entries) {
    const { span } = entry;
    const anchor = entry.linked
      ? span.parentSpanId && ids.has(span.parentSpanId)
        ? span.parentSpanId
        : span.links.find((link) => ids.has(link.spanId))?.spanId
      : span.parentSpanId;
    if (anchor && ids.has(anchor)) children.set(anchor, [...(children.get(anchor) ?? []), entry]);
    else roots.push(entry);
  }
  const byStart = (a: TraceEntry, b: TraceEntry) =>
    BigInt(a.span.startTimeUnixNano) < BigInt(b.span.startTimeUnixNano) ? -1 : 1;
  const drawn: (TraceEntry & { depth: number })[] = [];
  const visit = (entry: TraceEntry, depth: number) => {
    drawn.push({ ...entry, depth });
    for (const child of (children.get(entry.span.spanId) ?? []).sort(byStart)) visit(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) visit(root, 0);
  return drawn;
};

/** The earliest start of a trace's spans, in nanoseconds since the epoch. */
export const traceStart = (entries: readonly TraceEntry[]): bigint =>
  entries.reduce(
    (least, { span }) => (BigInt(span.startTimeUnixNano) < least ? BigInt(span.startTimeUnixNano) : least),
    entries.length === 0 ? 0n : BigInt(entries[0].span.startTimeUnixNano),
  );

/** Nanoseconds as milliseconds to the microsecond. */
export const nanosToMs = (nanos: bigint): number => Number(nanos / 1000n) / 1000;
