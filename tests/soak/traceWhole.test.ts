/**
 * The soak's tracing verdict (soak/traceWhole.ts): every delivered record's trace keeps its intake span and a
 * delivery attempt span that did not fail, and no kept span's parent is missing unless it is the caller's span.
 * Losses a SIGKILL explains (a kill while the invocation that made the span ran), or an intake function's timeout (its
 * request answered 504 just after the record was accepted), are counted apart. Negative
 * controls: a delivered record missing its delivery span, one missing its intake span, an orphan span, an orphan
 * whose kill came too late to excuse it, a 504 that does not match the record, a record with only a failed attempt,
 * and each fails the verdict.
 */
import { describe, expect, it } from 'vitest';
import type { KeptSpan } from '../../lib/observability/keptSpans.ts';
import { INVOCATION_BOUND_MS, type TracedRecord, traceWhole } from '../../soak/traceWhole.ts';
import { callerTraceparent, type Plan, requestOf } from '../../soak/workload.ts';

const T0 = 1_800_000_000_000;
const TRACE = 'a'.repeat(32);
const INTAKE = '1'.repeat(16);
const ATTEMPT = '2'.repeat(16);
const CALL = '3'.repeat(16);
const CALLER = 'c'.repeat(16);

const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const span = (spanId: string, name: string, at: number, more: Partial<KeptSpan> = {}): KeptSpan => ({
  traceId: TRACE,
  spanId,
  name,
  startTimeUnixNano: nanos(at),
  endTimeUnixNano: nanos(at + 100),
  status: 0,
  attributes: {},
  links: [],
  ...more,
});

/** One sale: accepted at T0 under the caller's trace, delivered at T0 + 2 s by one attempt and its SAP call. */
const record: TracedRecord = {
  id: 'rec-1',
  status: 'delivered',
  traceparent: `00-${TRACE}-${INTAKE}-01`,
  acceptedAt: T0,
  updatedAt: T0 + 2000,
};
const whole = (): KeptSpan[] => [
  span(INTAKE, 'POST /erp/sales_registration', T0 - 50, { parentSpanId: CALLER }),
  span(ATTEMPT, 'deliver salesRegistration', T0 + 1500, {
    parentSpanId: INTAKE,
    attributes: { 'record.id': 'rec-1' },
  }),
  span(CALL, 'erp call', T0 + 1600, { parentSpanId: ATTEMPT }),
];
const without = (spans: KeptSpan[], spanId: string) => spans.filter((kept) => kept.spanId !== spanId);
const verdict = (spans: KeptSpan[], kills: number[] = [], records: TracedRecord[] = [record]) =>
  traceWhole({ records, spans, kills, callerSpanIds: new Set([CALLER]) });

describe('every delivered record has a whole trace', () => {
  it('a whole trace, joined to the caller’s: kept', () => {
    // Act
    const figures = verdict(whole());
    // Assess
    expect(figures).toMatchObject({
      records: 1,
      spans: 3,
      withoutIntakeSpan: 0,
      withoutDeliverySpan: 0,
      orphanSpans: 0,
      joinedCallerTraces: 1,
      kept: true,
    });
  });

  it('a delivered record without its delivery span fails (negative control)', () => {
    // Act
    const figures = verdict(without(whole(), ATTEMPT));
    // Assess: the record has no delivery span, and the call's span lost its parent
    expect(figures).toMatchObject({ withoutDeliverySpan: 1, orphanSpans: 1, kept: false });
  });

  it('a record whose only attempt failed has no delivery span (negative control)', () => {
    // Prepare
    const spans = whole().map((kept) => (kept.spanId === ATTEMPT ? { ...kept, status: 2 } : kept));
    // Act / Assess
    expect(verdict(spans)).toMatchObject({ withoutDeliverySpan: 1, kept: false });
  });

  it('a delivered record without its intake span fails, and its attempt is an orphan (negative control)', () => {
    // Act
    const figures = verdict(without(whole(), INTAKE));
    // Assess
    expect(figures).toMatchObject({ withoutIntakeSpan: 1, orphanSpans: 1, kept: false });
  });

  it('an orphan span fails (negative control)', () => {
    // Prepare: a span of the trace naming a parent nobody kept, with the record otherwise whole
    const spans = [...whole(), span('4'.repeat(16), 'SAP POST', T0 + 1700, { parentSpanId: '5'.repeat(16) })];
    // Act / Assess
    expect(verdict(spans)).toMatchObject({ orphanSpans: 1, kept: false });
  });

  it('a record without any traceparent fails', () => {
    // Act
    const figures = verdict(whole(), [], [{ ...record, traceparent: undefined }]);
    // Assess
    expect(figures).toMatchObject({ withoutIntakeSpan: 1, withoutDeliverySpan: 1, kept: false });
  });
});

describe('what a SIGKILL may take', () => {
  it('an intake cut by a kill just after acceptance: its span and its orphaned attempt are excused, apart', () => {
    // Act
    const figures = verdict(without(whole(), INTAKE), [T0 + 300]);
    // Assess
    expect(figures).toMatchObject({
      withoutIntakeSpan: 0,
      orphanSpans: 0,
      excusedByKill: { intakeSpans: 1, deliverySpans: 0, orphanSpans: 1 },
      kept: true,
    });
  });

  it('a worker cut after writing the outcome: its attempt span is excused, and its call orphan too', () => {
    // Act
    const figures = verdict(without(whole(), ATTEMPT), [T0 + 2500]);
    // Assess
    expect(figures).toMatchObject({
      withoutDeliverySpan: 0,
      orphanSpans: 0,
      excusedByKill: { intakeSpans: 0, deliverySpans: 1, orphanSpans: 1 },
      kept: true,
    });
  });

  it('a kill before the invocation, or long after it, excuses nothing (negative control)', () => {
    // Act
    const early = verdict(without(whole(), ATTEMPT), [T0 - 60_000]);
    const late = verdict(without(whole(), ATTEMPT), [T0 + 2000 + INVOCATION_BOUND_MS + 5000]);
    // Assess
    for (const figures of [early, late])
      expect(figures).toMatchObject({ withoutDeliverySpan: 1, orphanSpans: 1, kept: false });
  });

  it('an intake stopped by its timeout (its request answered 504): its span and orphans are excused, apart', () => {
    // Act
    const figures = traceWhole({
      records: [record],
      spans: without(whole(), INTAKE),
      kills: [],
      callerSpanIds: new Set([CALLER]),
      timedOut: new Map([['rec-1', [T0 + 9800]]]),
    });
    // Assess
    expect(figures).toMatchObject({
      withoutIntakeSpan: 0,
      orphanSpans: 0,
      excusedByKill: { intakeSpans: 0, deliverySpans: 0, orphanSpans: 0 },
      excusedByTimeout: { intakeSpans: 1, orphanSpans: 1 },
      kept: true,
    });
  });

  it('a 504 before acceptance, or long after it, or of another record, excuses nothing (negative control)', () => {
    // Act
    const judged = [
      new Map([['rec-1', [T0 - 20_000]]]),
      new Map([['rec-1', [T0 + INVOCATION_BOUND_MS + 5000]]]),
      new Map([['rec-2', [T0 + 9800]]]),
    ].map((timedOut) =>
      traceWhole({
        records: [record],
        spans: without(whole(), INTAKE),
        kills: [],
        callerSpanIds: new Set([CALLER]),
        timedOut,
      }),
    );
    // Assess
    for (const figures of judged)
      expect(figures).toMatchObject({ withoutIntakeSpan: 1, orphanSpans: 1, kept: false });
  });

  it('a parent the caller did not send is an orphan, kill or not far from it (negative control)', () => {
    // Act
    const figures = traceWhole({ records: [record], spans: whole(), kills: [], callerSpanIds: new Set() });
    // Assess
    expect(figures).toMatchObject({ orphanSpans: 1, joinedCallerTraces: 0, kept: false });
  });
});

describe("the campaign's client joins its own traces", () => {
  it('every other plan sends a valid traceparent, the same for each of its tries', () => {
    // Prepare
    const plan = (index: number): Plan => ({
      index,
      kind: 'single',
      op: 'sale',
      records: [{ token: `SK0001R${index}`, op: 'sale', fields: { FrameNum: `F${index}` } }],
      fresh: 1,
      form: false,
      copies: 1,
    });
    // Act
    const sent = [0, 1, 2, 3].map((index) => requestOf(plan(index)).headers.traceparent);
    // Assess
    expect(sent[0]).toBeUndefined();
    expect(sent[2]).toBeUndefined();
    for (const traceparent of [sent[1], sent[3]])
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(sent[1]).not.toBe(sent[3]);
    expect(requestOf(plan(1)).headers.traceparent).toBe(callerTraceparent(plan(1)));
  });
});
