/**
 * Two records settled by one downstream call share their `eventsDueAt` to the millisecond. When the worker publishes
 * one's events and cannot publish the other's (the bus refuses), the reconciler finds the other's outbox through
 * the `events` index and publishes it. Against a store in its own process with the records table of serverless.yml,
 * and a real HTTP bus; the two ids are ones dynalite's own index keys cannot tell apart (six equal hash digits).
 *
 * Control: the same on a store with dynalite's own index keys (`--no-whole-index-keys`) loses the second event, as
 * one fault campaign run did: its outbox stays full and the reconciler never sees it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import {
  createRecordsTable,
  idsDynaliteHashesAlike,
  startStore,
  storeScope,
} from '../local/storeProcesses.ts';

const scope = storeScope('dealer-gateway-same-millisecond-');
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
beforeAll(async () => {
  bus = await startEventBridgeRecorder();
});
afterAll(() => bus.stop());

const SETTLED = new Date('2026-11-28T10:11:35.247Z');
const secondsAfter = (seconds: number) => new Date(SETTLED.getTime() + seconds * 1000);

/**
 * The service's modules afresh, their clients on `endpoint` (each module keeps its client for the process, as in a
 * Lambda container).
 */
const serviceOn = async (endpoint: string, table: string) => {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    RECORDS_TABLE: table,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
  vi.resetModules();
  const [{ resetSettings }, statusRecords, statusUpdates, publish, seed] = await Promise.all([
    import('../../lib/settings/environment.ts'),
    import('../../lib/store/statusRecords.ts'),
    import('../../lib/store/statusUpdates.ts'),
    import('../../lib/outbox/publish.ts'),
    import('../../testkit/seedStatus.ts'),
  ]);
  resetSettings();
  return { ...statusRecords, ...statusUpdates, ...publish, ...seed };
};

describe.each([
  { keys: 'whole index keys, as npm start stores them', flags: [], secondPublished: true },
  { keys: "dynalite's own index keys (control)", flags: ['--no-whole-index-keys'], secondPublished: false },
])('two records settled in the same millisecond, $keys', ({ flags, secondPublished }) => {
  it(`the reconciler ${secondPublished ? 'publishes' : 'never finds'} the event the worker could not publish`, async () => {
    // Prepare: both cases claimed and settled `delivered` by one call, at the same instant.
    const store = await startStore(await scope.dataDir(), flags, scope.children);
    const service = await serviceOn(store.endpoint, await createRecordsTable(store.endpoint));
    const [first, second] = idsDynaliteHashesAlike().map((id) => acceptedCase({ id }));
    if (!first || !second) throw new Error('no pair');
    await service.seedStatusRecords([first, second]);
    const settled = [];
    for (const record of [first, second]) {
      const { claimed } = await service.claimRecord(record.id, {
        now: SETTLED,
        leaseUntil: secondsAfter(90).toISOString(),
      });
      if (!claimed) throw new Error('not claimed');
      const written = await service.recordAttempt(
        claimed,
        { status: 'delivered', attempts: 1, at: SETTLED, downstreamId: '500Ab' },
        secondsAfter(90).toISOString(),
      );
      if (!written) throw new Error('not written');
      settled.push(written);
    }
    const [firstSettled, secondSettled] = settled;
    if (!firstSettled || !secondSettled) throw new Error('not settled');
    bus.reset();

    // Act: the worker publishes the first; the bus refuses the second; the reconciler runs once both are due.
    const firstNow = await service.publishAfterOutcome(firstSettled, SETTLED.getTime());
    bus.setMode('refuse-entries');
    const secondNow = await service.publishAfterOutcome(secondSettled, SETTLED.getTime());
    bus.setMode('up');
    const due = await service.publishDueEvents({ now: secondsAfter(61) });
    const outbox = (await service.getStatusRecord(second.id))?.pendingEvents ?? [];

    // Assess
    expect([firstNow, secondNow]).toEqual([true, false]);
    const published = bus.details().map((event) => (event as { recordId: string }).recordId);
    if (secondPublished) {
      expect(due).toMatchObject({ published: 1, unpublished: 0 });
      expect(published).toEqual([first.id, second.id]);
      expect(outbox).toEqual([]);
    } else {
      expect(due).toMatchObject({ published: 0, unpublished: 0 });
      expect(published).toEqual([first.id]);
      expect(outbox.map((change) => change.state)).toEqual(['delivered']);
    }
    store.child.kill('SIGTERM');
    await store.exited;
  });
});
