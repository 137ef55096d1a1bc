/**
 * The campaign's delivery times by client (fair share between clients: docs/behaviour.md#batching): for each record answered 200
 * and delivered, the time from its 200 to the first delivery call that the downstream took it in, by the client
 * that sent it and the record's kind. The quiet clients' times beside the flooding client's show whether one
 * client's backlog held the others up.
 */

import { quantile } from '../testkit/quantile.ts';
import type { DownstreamCall } from './downstreamCall.ts';
import type { PlanResult } from './ledger.ts';
import { clientOf, FLOODING_CLIENT, type Operation } from './workload.ts';

/** One client's records of one kind: how many were timed, and the median and 99th percentile, ms. */
export interface ClientTimes {
  client: string;
  op: Operation;
  /** The flooding client's (its backlog is the others' risk). */
  flooding: boolean;
  records: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * Delivery times by client and kind, from the plans, when each token's 200 came back, and the downstream calls.
 *
 * @example
 * deliveryTimesByClient({ results, answeredAt, calls }) // [{ client: 'example-web-forms', op: 'case', flooding: false, records: 140, p50Ms: 1800, p99Ms: 4100 }, …]
 */
export const deliveryTimesByClient = (input: {
  results: readonly PlanResult[];
  answeredAt: ReadonlyMap<string, number>;
  calls: readonly DownstreamCall[];
}): ClientTimes[] => {
  const deliveredAt = new Map<string, number>();
  for (const call of input.calls) {
    if (!call.token || call.status < 200 || call.status >= 300) continue;
    const known = deliveredAt.get(call.token);
    if (known === undefined || call.at < known) deliveredAt.set(call.token, call.at);
  }
  const groups = new Map<string, { client: string; op: Operation; times: number[] }>();
  const seen = new Set<string>();
  for (const { plan } of input.results) {
    const client = clientOf(plan);
    for (const record of plan.records) {
      if (seen.has(record.token)) continue;
      const answered = input.answeredAt.get(record.token);
      const delivered = deliveredAt.get(record.token);
      if (answered === undefined || delivered === undefined) continue;
      seen.add(record.token);
      const key = `${client} ${record.op}`;
      const group = groups.get(key) ?? { client, op: record.op, times: [] };
      // A record delivered before its (retried) request's 200 came back counts as no wait.
      group.times.push(Math.max(0, delivered - answered));
      groups.set(key, group);
    }
  }
  return [...groups.values()]
    .map(({ client, op, times }) => ({
      client,
      op,
      flooding: client === FLOODING_CLIENT && op === 'case',
      records: times.length,
      p50Ms: quantile(times, 0.5),
      p99Ms: quantile(times, 0.99),
    }))
    .sort((a, b) => `${a.op} ${a.client}`.localeCompare(`${b.op} ${b.client}`));
};
