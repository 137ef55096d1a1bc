/**
 * The soak's delivery times by client (soak/clientTimes.ts): each record timed once, from its first 200 to
 * the first delivery call the downstream took it in, grouped by the client that sent it (the flooding client's
 * cases apart from the web forms').
 */
import { describe, expect, it } from 'vitest';
import { deliveryTimesByClient } from '../../soak/clientTimes.ts';
import type { DownstreamCall } from '../../soak/downstreamCall.ts';
import type { PlanResult } from '../../soak/ledger.ts';
import { FLOODING_CLIENT, type Plan } from '../../soak/workload.ts';

/** A case plan of one record `token`, sent by `client` (the web forms when absent). */
const casePlan = (index: number, token: string, client?: string): PlanResult => ({
  plan: {
    index,
    kind: 'case',
    op: 'case',
    records: [{ token, op: 'case', fields: {} }],
    fresh: 1,
    form: false,
    copies: 1,
    ...(client ? { client } : {}),
  } as Plan,
  sends: [],
});

const delivered = (token: string, at: number, status = 201): DownstreamCall => ({
  downstream: 'salesforce',
  at,
  status,
  id: token,
  token,
});

describe('delivery times by client', () => {
  it("times each record from its 200 to its first accepted delivery call, the flood's apart", () => {
    // Prepare: two flood cases, two quiet ones; one quiet case was tried first with a 503.
    const results = [
      casePlan(0, 'F1', FLOODING_CLIENT),
      casePlan(1, 'F2', FLOODING_CLIENT),
      casePlan(2, 'Q1'),
      casePlan(3, 'Q2'),
    ];
    const answeredAt = new Map([
      ['F1', 1_000],
      ['F2', 1_000],
      ['Q1', 2_000],
      ['Q2', 2_000],
    ]);
    const calls = [
      delivered('F1', 9_000),
      delivered('F2', 31_000),
      delivered('Q1', 2_500, 503),
      delivered('Q1', 3_000),
      delivered('Q2', 4_000),
      delivered('Q2', 8_000),
    ];
    // Act
    const times = deliveryTimesByClient({ results, answeredAt, calls });
    // Assess
    expect(times).toEqual([
      { client: 'example-dealer', op: 'case', flooding: true, records: 2, p50Ms: 8_000, p99Ms: 30_000 },
      { client: 'example-web-forms', op: 'case', flooding: false, records: 2, p50Ms: 1_000, p99Ms: 2_000 },
    ]);
  });
});
