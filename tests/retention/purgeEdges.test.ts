/**
 * The purge at its edges: more due records than one page of the `purge` index, a limit that ends inside the second
 * page, and its consistent reads. Settled records are seeded as the worker's settling write leaves them (`purgeKind`,
 * `purgeAt`); a table of each test's own (dynalite, from serverless.yml), behind a proxy that records the calls.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StatusRecord } from '../../lib/records/types.ts';
import { purgePersonalData } from '../../lib/retention/purge.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof freshAws>>;
/** The service's DynamoDB calls pass this proxy, which records them. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

beforeAll(async () => {
  aws = await freshAws();
  dynamo = await startHookedProxy(aws.dynamoEndpoint);
});

afterAll(async () => {
  await dynamo.stop();
});

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  dynamo.reset();
});

const NOW = new Date('2026-03-01T12:00:00.000Z');

/** `count` delivered cases whose personal fields were due for removal a second apart, the oldest first. */
const dueCases = (count: number): StatusRecord[] =>
  Array.from({ length: count }, (_, i) =>
    acceptedCase({
      status: 'delivered',
      statusKey: 'caseRecord#delivered',
      openKind: undefined,
      dueAt: undefined,
      attempts: 1,
      purgeKind: 'caseRecord',
      purgeAt: new Date(NOW.getTime() - (count - i) * 1000).toISOString(),
    }),
  );

const queryLimits = () =>
  dynamo.requests.filter((call) => call.operation === 'Query').map((call) => call.body.Limit);

describe('purgePersonalData: pages of the purge index', () => {
  it('reads on past the first page of 100, and asks the second page for no more than its limit leaves', async () => {
    // Prepare: 102 records due; a limit of 101.
    const records = dueCases(102);
    await seedStatusRecords(records);
    dynamo.reset();
    // Act
    const first = await purgePersonalData({ now: NOW, limit: 101, kinds: ['caseRecord'] });
    const limits = queryLimits();
    const second = await purgePersonalData({ now: NOW, limit: 101, kinds: ['caseRecord'] });
    // Assess: 101 purged, the oldest first; the newest waits for the next run.
    expect(first).toEqual({ purged: { salesRegistration: 0, caseRecord: 101 }, skipped: 0, limited: true });
    expect(limits).toEqual([100, 1]);
    expect(second).toEqual({ purged: { salesRegistration: 0, caseRecord: 1 }, skipped: 0, limited: false });
    const newest = records[101];
    expect((await getStatusRecord(newest.id))?.personalDataRemovedAt).toBe(NOW.toISOString());
  });

  it('reads the records it found in the index consistently (the index may be older than the record)', async () => {
    // Prepare
    await seedStatusRecords(dueCases(1));
    dynamo.reset();
    // Act
    await purgePersonalData({ now: NOW, kinds: ['caseRecord'] });
    // Assess
    const reads = dynamo.requests.filter((call) => call.operation === 'BatchGetItem');
    expect(reads).toHaveLength(1);
    const requestItems = reads[0].body.RequestItems as Record<string, { ConsistentRead?: boolean }>;
    expect(Object.values(requestItems).map((table) => table.ConsistentRead)).toEqual([true]);
  });
});
