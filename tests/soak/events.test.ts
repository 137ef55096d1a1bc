/**
 * The soak's event check (soak/events.ts) on events as the webhook receiver lists them: lost, copies,
 * leaked and personal data counted as the campaign reports them.
 */
import { describe, expect, it } from 'vitest';
import {
  checkEvents,
  eventsKept,
  personalFieldIn,
  personalValueIndex,
  type ReceivedHook,
} from '../../soak/events.ts';
import type { SoakRecord } from '../../soak/workload.ts';

/** An event as the receiver lists it: the signed body, verified unless said otherwise. */
const hook = (
  client: string,
  recordId: string,
  state: string,
  extra: Record<string, unknown> = {},
  verified = true,
) =>
  ({
    client,
    verified,
    event: {
      type: `record.${state}`,
      timestamp: '2026-11-27T03:10:50.000Z',
      data: { recordId, state, kind: 'salesRegistration', ...extra },
    },
  }) as ReceivedHook;
/** A delivery still on the local bus: the EventBridge envelope, its detail naming the client. */
const onTheBus = (client: string, recordId: string, state: string, detailClient = client) =>
  ({
    client,
    event: {
      'detail-type': 'Record state changed',
      detail: { recordId, state, client: detailClient, kind: 'salesRegistration' },
    },
  }) as ReceivedHook;

const sale: SoakRecord = {
  token: 'SKAB12R1',
  op: 'sale',
  fields: {
    DealerId: 1234,
    FrameNum: 'SKAB12F1',
    Name: 'Soakrider',
    Name2: 'Rider1',
    Street: '1 Soak Lane SKAB12R1',
    email: 'rider1.ab12@example.com',
    Phone: '+61 400 001 001',
  },
};
const webhookClients = new Set(['example-dealer']);

describe('the soak event check', () => {
  it('counts an event of the final state as received, and the copies and other states apart', () => {
    // Prepare
    const expected = new Map([
      ['s1', 'delivered'],
      ['s2', 'rejected'],
    ]);
    const received = [
      hook('example-dealer', 's1', 'delivered'),
      hook('example-dealer', 's1', 'delivered'),
      hook('example-dealer', 's2', 'delivered'), // not its final state
    ];
    // Act
    const { counts, missing } = checkEvents({
      expected,
      foreign: new Set(),
      webhookClients,
      received,
      personal: personalValueIndex([sale]),
    });
    // Assess
    expect(counts).toMatchObject({ eventsExpected: 2, eventsLost: 1, eventCopies: 1, eventsLeaked: 0 });
    expect([...missing]).toEqual([['s2', 'rejected']]);
  });

  it('counts events of records or clients without a webhook as leaked, at the receiver or on the bus', () => {
    // Act
    const { counts } = checkEvents({
      expected: new Map(),
      foreign: new Set(['c1']),
      webhookClients,
      received: [hook('example-dealer', 'c1', 'delivered'), hook('example-web-forms', 'c2', 'delivered')],
      // The receiver refuses a client without a webhook: such a delivery is found on the bus, not at the receiver.
      onBus: [
        onTheBus('example-web-forms', 'c4', 'rejected'),
        onTheBus('example-dealer', 's5', 'delivered'),
        onTheBus('example-dealer', 's3', 'delivered', 'example-web-forms'),
      ],
      personal: personalValueIndex([sale]),
    });
    // Assess
    expect(counts.eventsLeaked).toBe(4);
    expect(counts.eventsReceived).toBe(2);
  });

  it('counts a request whose signature did not verify as a problem, and not as the event arriving', () => {
    // Act
    const { counts, missing, examples } = checkEvents({
      expected: new Map([['s1', 'delivered']]),
      foreign: new Set(),
      webhookClients,
      received: [hook('example-dealer', 's1', 'delivered', {}, false)],
      personal: personalValueIndex([sale]),
    });
    // Assess
    expect(counts).toMatchObject({ eventsUnverified: 1, eventsLost: 1 });
    expect([...missing]).toEqual([['s1', 'delivered']]);
    expect(examples.eventsUnverified).toEqual(['s1 under example-dealer']);
    expect(eventsKept(counts)).toBe(false);
  });

  it('finds a personal value the campaign sent anywhere in an event, naming the field only', () => {
    // Act
    const { counts, examples } = checkEvents({
      expected: new Map([['s1', 'rejected']]),
      foreign: new Set(),
      webhookClients,
      received: [
        hook('example-dealer', 's1', 'rejected', { error: 'refused for rider1.ab12@example.com' }),
        hook('example-dealer', 's1', 'rejected', { FrameNum: 'SKAB12F1', DealerId: 1234 }),
      ],
      personal: personalValueIndex([sale]),
    });
    // Assess
    expect(counts.eventsWithPersonalData).toBe(1);
    expect(examples.eventsWithPersonalData).toEqual(['s1 under example-dealer: its email']);
    expect(JSON.stringify(examples)).not.toContain('rider1');
  });

  it.each([
    ['in another case', 'refused for RIDER1.AB12@EXAMPLE.COM', 'email'],
    ['as a part of it', 'mail to rider1.ab12@ex bounced', 'email'],
    ['with other whitespace', 'call +61400001\n001 now', 'Phone'],
    ['spread over a JSON escape', '1 Soak\\nLane SKAB12R1', 'Street'],
    ['a short whole value, any case', 'customer SOAKRIDER blocked', 'Name'],
  ])('recognises a personal value %s', (_label, text, field) => {
    // Act
    const found = personalFieldIn(JSON.stringify({ error: text }), personalValueIndex([sale]));
    // Assess
    expect(found).toBe(field);
  });

  it('does not take a short or common part of a value, or what is not personal, for personal data', () => {
    // Prepare
    const texts = [
      'SERVICE UNAVAILABLE: soak lane',
      'a rider at example.com (Soakrider)', // common to more than 10 riders
      'Frame SKAB12F1 of dealer 1234 refused',
      '{"recordId":"9b1f0c2d3e4f5a6b7c8d9e0f1a2b3c4d","time":"2026-11-27T03:10:50Z"}',
    ];
    // Eleven riders share the domain of their addresses and their surname.
    const riders = Array.from({ length: 11 }, (_, n) => ({
      ...sale,
      token: `SKAB12R${n + 1}`,
      fields: { ...sale.fields, email: `rider${n + 1}.ab12@example.com`, Name2: `Rider${n + 1}` },
    }));
    // Act
    const found = texts.map((text) => personalFieldIn(text, personalValueIndex(riders)));
    // Assess
    expect(found).toEqual([undefined, undefined, undefined, undefined]);
  });

  it.each([
    ['nothing wrong', [hook('example-dealer', 's1', 'delivered')], true],
    ['a planted lost event', [hook('example-dealer', 's1', 'accepted')], false],
    [
      'a planted leaked event',
      [hook('example-dealer', 's1', 'delivered'), hook('example-web-forms', 'c1', 'delivered')],
      false,
    ],
    ['a planted personal value', [hook('example-dealer', 's1', 'delivered', { note: 'Rider1' })], false],
    [
      'a planted request whose signature did not verify',
      [hook('example-dealer', 's1', 'delivered'), hook('example-dealer', 's1', 'delivered', {}, false)],
      false,
    ],
  ])('keeps the event promise only with %s', (_label, received, kept) => {
    // Act
    const { counts } = checkEvents({
      expected: new Map([['s1', 'delivered']]),
      foreign: new Set(['c1']),
      webhookClients,
      received: received as ReceivedHook[],
      personal: personalValueIndex([sale]),
    });
    // Assess
    expect(eventsKept(counts)).toBe(kept);
  });

  it('does not take test mode’s magic last names for a person’s name; a real name in their place is still found', () => {
    // Prepare: test sales named as the API guide says, and the control: a name that is someone's.
    const named = (Name: string): SoakRecord => ({
      ...sale,
      token: `SK${Name}`,
      fields: { ...sale.fields, Name },
    });
    const event = JSON.stringify({ data: { state: 'rejected', error: 'retry later; failed' } });
    // Act
    const magic = personalFieldIn(event, personalValueIndex(['Reject', 'RETRY', 'Fail'].map(named)));
    const person = personalFieldIn(event, personalValueIndex([named('Rejected')]));
    // Assess
    expect(magic).toBeUndefined();
    expect(person).toBe('Name');
  });
});
