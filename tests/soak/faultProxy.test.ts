import { afterEach, describe, expect, it } from 'vitest';
import { EventBridgeClient, PutEventsCommand } from '../../lib/aws/jsonProtocol/eventBridge.ts';
import { type LocalEventBus, startLocalEventBus } from '../../local/eventBus.ts';
import { localRegion } from '../../local/project.ts';
import { type FaultProxy, startFaultProxy } from '../../testkit/faultProxy.ts';

let bus: LocalEventBus | undefined;
let proxy: FaultProxy | undefined;

afterEach(async () => {
  await proxy?.stop();
  await bus?.stop();
});

const entry = (n: number) => ({
  EventBusName: 'soak-bus',
  Source: 'dealer-gateway',
  DetailType: 'Record state changed',
  Detail: JSON.stringify({ recordId: `r${n}`, state: 'delivered', client: 'nobody' }),
});

describe('the fault proxy in front of the bus', () => {
  it('reports a refused PutEvents entry failed in its place and forwards the others', async () => {
    // Prepare
    bus = await startLocalEventBus({ busNames: ['soak-bus'] });
    const upstream = bus.url;
    proxy = await startFaultProxy({
      upstream,
      policy: (operation) => (operation === 'PutEvents' ? { kind: 'refuseEntry' } : undefined),
    });
    const client = new EventBridgeClient({
      endpoint: proxy.endpoint,
      region: localRegion,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });

    // Act
    const two = await client.send(new PutEventsCommand({ Entries: [entry(1), entry(2)] }));
    const one = await client.send(new PutEventsCommand({ Entries: [entry(3)] }));

    // Assess
    expect(two.FailedEntryCount).toBe(1);
    expect(two.Entries?.map((result) => result.ErrorCode ?? 'ok')).toEqual(['InternalFailure', 'ok']);
    expect(two.Entries?.[1].EventId).toBeTruthy();
    expect(one).toMatchObject({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure' }] });
    expect(proxy.counts()).toEqual({ calls: 2, faults: { refuseEntry: 2 } });
  });
});
