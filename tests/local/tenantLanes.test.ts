/**
 * The order the local fair queue serves ready messages in (local/emulators/fauxqs/tenantLanes.ts), against the rules AWS documents
 * for SQS fair queues: quiet tenants first, oldest first; a tenant is noisy with more than 10% of the messages in
 * flight and at least 30 of them; among noisy tenants, the one with the fewest in flight first; messages without a
 * group id in the order they came.
 */
import { describe, expect, it } from 'vitest';
import { type InFlightCounts, TenantLanes } from '../../local/emulators/fauxqs/tenantLanes.ts';

interface Msg {
  id: string;
  messageGroupId?: string;
}

/** In-flight counts the test sets by hand: by tenant, plus `others` in flight with no group id. */
const inFlight = (byTenant: Record<string, number>, others = 0): InFlightCounts => ({
  total: () => Object.values(byTenant).reduce((sum, n) => sum + n, others),
  of: (tenant) => byTenant[tenant] ?? 0,
});

const messages = (tenant: string | undefined, count: number, prefix = tenant ?? 'none'): Msg[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i}`,
    ...(tenant === undefined ? {} : { messageGroupId: tenant }),
  }));

const takeAll = (lanes: TenantLanes<Msg>) => {
  const ids: string[] = [];
  for (let message = lanes.shift(); message; message = lanes.shift()) ids.push(message.id);
  return ids;
};

describe('the fair order of ready messages', () => {
  it('serves quiet tenants oldest first, as a first in, first out queue would', () => {
    // Prepare: nothing in flight; two tenants and ungrouped messages interleaved.
    const lanes = new TenantLanes<Msg>(inFlight({}));
    lanes.push({ id: 'a-0', messageGroupId: 'a' }, { id: 'n-0' }, { id: 'b-0', messageGroupId: 'b' });
    lanes.push({ id: 'a-1', messageGroupId: 'a' }, { id: 'n-1' });
    // Act / Assess
    expect(lanes.length).toBe(5);
    expect(takeAll(lanes)).toEqual(['a-0', 'n-0', 'b-0', 'a-1', 'n-1']);
    expect(lanes.length).toBe(0);
  });

  it("serves a quiet tenant's message before an older backlog of a noisy tenant", () => {
    // Prepare: tenant a has 30 of the 30 in flight, and 100 more waiting; then b's one message.
    const lanes = new TenantLanes<Msg>(inFlight({ a: 30 }));
    lanes.push(...messages('a', 100));
    lanes.push({ id: 'b-0', messageGroupId: 'b' });
    // Act
    const first = lanes.shift();
    // Assess: b first, then a's in their order.
    expect(first?.id).toBe('b-0');
    expect(takeAll(lanes)).toEqual(messages('a', 100).map((m) => m.id));
  });

  it.each([
    { case: '29 in flight (fewer than 30)', a: 29, others: 0, noisy: false },
    { case: '30 in flight, all of them', a: 30, others: 0, noisy: true },
    { case: '30 in flight of 300 (exactly 10%)', a: 30, others: 270, noisy: false },
    { case: '31 in flight of 300 (over 10%)', a: 31, others: 269, noisy: true },
  ])('takes a tenant for noisy only past both thresholds: $case', ({ a, others, noisy }) => {
    // Prepare: a's older message, then b's.
    const lanes = new TenantLanes<Msg>(inFlight({ a }, others));
    lanes.push({ id: 'a-0', messageGroupId: 'a' }, { id: 'b-0', messageGroupId: 'b' });
    // Act / Assess: a noisy tenant waits behind b; a quiet one is served in its turn.
    expect(lanes.shift()?.id).toBe(noisy ? 'b-0' : 'a-0');
  });

  it('serves ungrouped messages (each its own tenant) before a noisy backlog', () => {
    const lanes = new TenantLanes<Msg>(inFlight({ a: 50 }));
    lanes.push(...messages('a', 3));
    lanes.push(...messages(undefined, 2));
    expect(takeAll(lanes)).toEqual(['none-0', 'none-1', 'a-0', 'a-1', 'a-2']);
  });

  it('among noisy tenants only, serves the one with the fewest in flight first', () => {
    // Prepare: a has 80 in flight, b 40; a's messages are older.
    const lanes = new TenantLanes<Msg>(inFlight({ a: 80, b: 40 }));
    lanes.push(...messages('a', 2));
    lanes.push(...messages('b', 2));
    // Act / Assess: b (fewer in flight) before a, whatever the age.
    expect(takeAll(lanes)).toEqual(['b-0', 'b-1', 'a-0', 'a-1']);
  });

  it('keeps each message once through a long backlog, and lists what is left', () => {
    // Prepare: 5,000 of a (noisy) and some of b, taken partly (past the point where served ones are dropped).
    const counts = { a: 40 };
    const lanes = new TenantLanes<Msg>(inFlight(counts));
    lanes.push(...messages('a', 5000));
    lanes.push(...messages('b', 3));
    const taken = Array.from({ length: 3000 }, () => lanes.shift()?.id);
    // Act
    const listed = [...lanes].map((m) => m.id);
    // Assess: b's three first, then a's oldest; what is left is listed oldest first, nothing twice or lost.
    expect(taken.slice(0, 4)).toEqual(['b-0', 'b-1', 'b-2', 'a-0']);
    expect(listed).toEqual(
      messages('a', 5000)
        .slice(2997)
        .map((m) => m.id),
    );
    expect(new Set([...taken, ...listed]).size).toBe(5003);
    expect(lanes.length).toBe(2003);
  });
});
