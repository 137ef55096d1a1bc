/**
 * The soak's verdict on tracing (contract section 8, one trace per record): every delivered record's trace is whole
 * in the spans npm start kept (`<dataDir>/traces.jsonl`, local/traceReceiver.ts), read once npm start stopped.
 *
 * - **intake span**: the span its status record's `traceparent` names (the intake span that accepted it) is kept;
 * - **delivery span**: a delivery attempt span of its trace (`record.id` its id) that did not fail is kept (a
 *   batched call's span is a trace of its own, linked to that attempt span: the attempt span is what tells);
 * - **no orphan**: every kept span's parent (within its trace) is a kept span, or the caller's own span (the
 *   `traceparent` the campaign's client sent with the request: the gateway joined the client's trace).
 *
 * What a SIGKILL may honestly take: spans are exported when the handler that made them returns (or by the exporter's
 * 1 s timer in npm start's long-lived process), so a kill mid-invocation loses the spans of that invocation not yet
 * sent, and nothing else. Each loss is excused only when a kill fell where that invocation was running, and counted
 * apart:
 *
 * - an intake span is excused when a kill came within {@link INVOCATION_BOUND_MS} after the record was accepted
 *   (`acceptedAt` is stamped before the record is written, the span sent as the request is answered);
 * - a delivery span is excused when a kill came within that bound after the record's last change (`updatedAt`, the
 *   delivered outcome: publishing its events leaves it as it is; the attempt span ends after that write and is sent
 *   after the events are published);
 * - an orphan whose parent is a record's intake span is excused when that intake span's loss is; any other parent
 *   is a span of the orphan's own invocation, which outlived it (a call's span, an attempt's), so the orphan is
 *   excused when a kill came within the bound after it ended.
 *
 * - an intake invocation stopped by its function's timeout (10 s: serverless-offline stops its worker thread as Lambda
 *   stops the runtime, and a hung call to the store or the queue under the campaign's faults takes it there) loses
 *   its span too: excused when a request of the plan that sent the record was answered 504 within the bound after
 *   the record was accepted, and counted apart from the kills' (with the orphans of that intake span).
 *
 * Anything else fails the run. A record accepted before tracing (no `traceparent`) counts as one without an intake
 * span.
 */
import type { KeptSpan } from '../lib/observability/keptSpans.ts';

/** The longest an invocation runs (API Gateway answers 504 after 29 s; the worker's batches take seconds). */
export const INVOCATION_BOUND_MS = 30_000;

/** Clocks of the campaign and the service's processes are the machine's; a little slack for rounding. */
const SLACK_MS = 1000;

/** What the store says of one record. */
export interface TracedRecord {
  id: string;
  status: string;
  traceparent?: string;
  /** Epoch ms. */
  acceptedAt: number;
  /** Epoch ms: for a delivered record, when its delivered outcome was written. */
  updatedAt: number;
}

export interface TraceWholeInput {
  /** Every status record of the store (the delivered ones are checked; the others' intake spans name parents). */
  records: readonly TracedRecord[];
  spans: readonly KeptSpan[];
  /** Times of the SIGKILLs of npm start (epoch ms). */
  kills: readonly number[];
  /** Span ids of the `traceparent`s the campaign's client sent (the caller's spans: parents outside the file). */
  callerSpanIds: ReadonlySet<string>;
  /**
   * By record id: when a request of the plan that sent it was answered 504, the API function's timeout (epoch ms).
   * The timed-out invocation is stopped (serverless-offline stops its worker thread, as Lambda stops a runtime),
   * its spans unsent: an intake span lost so is excused when such an answer came within the bound after acceptance.
   */
  timedOut?: ReadonlyMap<string, readonly number[]>;
}

export interface TraceWholeFigures {
  /** Delivered records checked. */
  records: number;
  /** Spans read from traces.jsonl. */
  spans: number;
  /** Delivered records whose intake span is not kept (nor excused by a kill). */
  withoutIntakeSpan: number;
  /** Delivered records with no kept delivery attempt span that did not fail (nor excused by a kill). */
  withoutDeliverySpan: number;
  /** Kept spans whose parent is neither kept nor the caller's (nor excused by a kill). */
  orphanSpans: number;
  /** Losses a kill excused: missing intake spans, missing delivery spans, orphans. */
  excusedByKill: { intakeSpans: number; deliverySpans: number; orphanSpans: number };
  /** Losses the intake function's timeout excused (its request answered 504): intake spans, their orphans. */
  excusedByTimeout: { intakeSpans: number; orphanSpans: number };
  /** Intake spans whose parent is the caller's span (the client's trace joined). */
  joinedCallerTraces: number;
  /** Ids of records and spans that fail, a few of each. */
  examples: string[];
  kept: boolean;
}

const partsOf = (traceparent: string | undefined): { traceId: string; spanId: string } | undefined => {
  const match = traceparent?.trim().match(/^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}/);
  return match ? { traceId: match[1], spanId: match[2] } : undefined;
};

const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);

/** Whether a kill fell in [from, to] (epoch ms, with slack). */
const killIn = (kills: readonly number[], from: number, to: number) =>
  kills.some((at) => at >= from - SLACK_MS && at <= to + SLACK_MS);

const EXAMPLES = 10;

/**
 * The verdict on the kept spans: figures, and `kept` when nothing failed.
 *
 * @example
 * const figures = traceWhole({ records, spans: await readKeptSpans(tracesFile(dataDir)), kills, callerSpanIds });
 * figures.kept; // false when a delivered record's trace misses its intake or delivery span, or a span its parent
 */
export const traceWhole = ({
  records,
  spans,
  kills,
  callerSpanIds,
  timedOut = new Map(),
}: TraceWholeInput): TraceWholeFigures => {
  const kept = new Set(spans.map((span) => `${span.traceId}/${span.spanId}`));
  const examples: string[] = [];
  const example = (text: string) => {
    if (examples.length < EXAMPLES) examples.push(text);
  };
  const excused = { intakeSpans: 0, deliverySpans: 0, orphanSpans: 0 };
  const excusedByTimeout = { intakeSpans: 0, orphanSpans: 0 };

  // Each record's intake span, and whether its loss is a kill's or its request's timeout's.
  const intakeOf = new Map<string, { record: TracedRecord; killed: boolean; timedOut: boolean }>();
  for (const record of records) {
    const parts = partsOf(record.traceparent);
    if (!parts) continue;
    const killed = killIn(kills, record.acceptedAt, record.acceptedAt + INVOCATION_BOUND_MS);
    intakeOf.set(`${parts.traceId}/${parts.spanId}`, {
      record,
      killed,
      timedOut:
        !killed &&
        killIn(timedOut.get(record.id) ?? [], record.acceptedAt, record.acceptedAt + INVOCATION_BOUND_MS),
    });
  }

  const attemptsOk = new Set(
    spans
      .filter((span) => span.name.startsWith('deliver ') && span.status !== 2)
      .map((span) => `${span.traceId}/${span.attributes['record.id']}`),
  );

  let withoutIntakeSpan = 0;
  let withoutDeliverySpan = 0;
  const delivered = records.filter((record) => record.status === 'delivered');
  for (const record of delivered) {
    const parts = partsOf(record.traceparent);
    if (!parts) {
      withoutIntakeSpan++;
      withoutDeliverySpan++;
      example(`record ${record.id}: no traceparent`);
      continue;
    }
    const intake = `${parts.traceId}/${parts.spanId}`;
    if (!kept.has(intake)) {
      if (intakeOf.get(intake)?.killed) excused.intakeSpans++;
      else if (intakeOf.get(intake)?.timedOut) excusedByTimeout.intakeSpans++;
      else {
        withoutIntakeSpan++;
        example(`record ${record.id}: no intake span ${parts.spanId} in trace ${parts.traceId}`);
      }
    }
    if (!attemptsOk.has(`${parts.traceId}/${record.id}`)) {
      if (killIn(kills, record.updatedAt, record.updatedAt + INVOCATION_BOUND_MS)) excused.deliverySpans++;
      else {
        withoutDeliverySpan++;
        example(`record ${record.id}: no delivery span that did not fail in trace ${parts.traceId}`);
      }
    }
  }

  let orphanSpans = 0;
  let joinedCallerTraces = 0;
  for (const span of spans) {
    if (!span.parentSpanId) continue;
    if (kept.has(`${span.traceId}/${span.parentSpanId}`)) continue;
    if (callerSpanIds.has(span.parentSpanId)) {
      joinedCallerTraces++;
      continue;
    }
    const intake = intakeOf.get(`${span.traceId}/${span.parentSpanId}`);
    if (intake?.timedOut) {
      excusedByTimeout.orphanSpans++;
      continue;
    }
    const killed = intake
      ? intake.killed
      : killIn(kills, ms(span.endTimeUnixNano), ms(span.endTimeUnixNano) + INVOCATION_BOUND_MS);
    if (killed) excused.orphanSpans++;
    else {
      orphanSpans++;
      example(
        `span ${span.spanId} (${span.name}) of trace ${span.traceId}: parent ${span.parentSpanId} not kept`,
      );
    }
  }

  return {
    records: delivered.length,
    spans: spans.length,
    withoutIntakeSpan,
    withoutDeliverySpan,
    orphanSpans,
    excusedByKill: excused,
    excusedByTimeout,
    joinedCallerTraces,
    examples,
    kept: withoutIntakeSpan + withoutDeliverySpan + orphanSpans === 0,
  };
};
