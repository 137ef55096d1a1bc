import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  countByStatus,
  frameRecordIds,
  readStatusRecord,
  recordsByStatus,
  type StatusIndexEntry,
  statusRecordsIn,
} from '../../lib/store/statusIndex.ts';
import { putContentAliasIfAbsent } from '../../lib/store/statusRecords.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { acceptRecord, attempt } from './seed.ts';

let recorder: AwsCallRecorder;

beforeAll(async () => {
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
  });
});
afterAll(() => recorder.stop());

beforeEach(async () => {
  // A table of its own for every test; every DynamoDB call of the test goes through the recorder.
  await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = recorder.endpoint;
  recorder.calls.length = 0;
});

/** The operations (and indexes) of the calls made since `from`. */
const callsSince = (from: number) =>
  recorder.calls
    .slice(from)
    .map(
      (call) =>
        `${call.operation}${call.authorised[0]?.resource && 'index' in call.authorised[0].resource ? `:${call.authorised[0].resource.index}` : ''}`,
    );

const pagesOf = async (query: AsyncGenerator<StatusIndexEntry[]>) => {
  const pages: StatusIndexEntry[][] = [];
  for await (const page of query) pages.push(page);
  return pages;
};

const at = (minute: number) => `2026-11-22T08:${String(minute).padStart(2, '0')}:00.000Z`;

describe('recordsByStatus', () => {
  it('yields the records of a kind in a state, oldest accepted first, page by page, from the index alone', async () => {
    // Prepare: three failed sales accepted out of order, one delivered sale, one failed case.
    const failed = [];
    for (const minute of [3, 1, 2]) {
      const sale = await acceptRecord('salesRegistration', { at: at(minute), frame: `F${minute}` });
      failed.push(await attempt(sale, { status: 'failed', error: 'SAP answered 500', at: at(10 + minute) }));
    }
    await attempt(await acceptRecord('salesRegistration'), {
      status: 'delivered',
      downstreamId: '49',
      at: at(20),
    });
    await attempt(await acceptRecord('caseRecord'), { status: 'failed', error: 'x', at: at(21) });
    const from = recorder.calls.length;
    // Act
    const pages = await pagesOf(recordsByStatus('salesRegistration', 'failed', { pageSize: 2 }));
    // Assess: the index's own projection (no `record`), two Query calls, no scan, no read of the records.
    expect(pages.map((page) => page.map((entry) => entry.frameKey))).toEqual([
      ['example-dealer#F1', 'example-dealer#F2'],
      ['example-dealer#F3'],
    ]);
    expect(pages[0][0]).toEqual({
      id: failed[1].id,
      kind: 'salesRegistration',
      status: 'failed',
      owner: 'example-dealer',
      dealer: 1234,
      frameKey: 'example-dealer#F1',
      attempts: 1,
      acceptedAt: at(1),
      updatedAt: at(11),
      error: 'SAP answered 500',
    });
    expect(callsSince(from)).toEqual(['Query:status', 'Query:status']);
  });

  it('with acceptedBefore, reads only the records accepted before then (a key condition)', async () => {
    const early = await acceptRecord('caseRecord', { at: at(1) });
    await acceptRecord('caseRecord', { at: at(5) });
    const pages = await pagesOf(recordsByStatus('caseRecord', 'accepted', { acceptedBefore: at(5) }));
    expect(pages.flat().map((entry) => entry.id)).toEqual([early.id]);
  });

  it('filters by client and by dealer, and yields no empty page', async () => {
    // Prepare
    const mine = await acceptRecord('salesRegistration', { owner: 'example-dealer', dealer: 100234 });
    await acceptRecord('salesRegistration', { owner: 'example-dealer', dealer: 1234 });
    await acceptRecord('salesRegistration', { owner: 'other-dealer', dealer: 100234 });
    // Act
    const byBoth = await pagesOf(
      recordsByStatus('salesRegistration', 'accepted', {
        owner: 'example-dealer',
        dealer: 100234,
        pageSize: 1,
      }),
    );
    const byClient = await pagesOf(
      recordsByStatus('salesRegistration', 'accepted', { owner: 'other-dealer' }),
    );
    // Assess
    expect(byBoth).toEqual([[expect.objectContaining({ id: mine.id })]]);
    expect(byClient.flat().map((entry) => entry.owner)).toEqual(['other-dealer']);
  });

  it('follows a record from state to state: it is listed in its current state only', async () => {
    const sale = await acceptRecord('salesRegistration');
    await attempt(sale, { status: 'accepted', reached: false, error: 'timeout', at: at(1) });
    const stillAccepted = await pagesOf(recordsByStatus('salesRegistration', 'accepted'));
    await attempt(sale, { status: 'rejected', error: 'frame number registered twice', at: at(2) });
    expect(stillAccepted.flat().map((entry) => entry.id)).toEqual([sale.id]);
    expect(await pagesOf(recordsByStatus('salesRegistration', 'accepted'))).toEqual([]);
    expect((await pagesOf(recordsByStatus('salesRegistration', 'rejected'))).flat()).toEqual([
      expect.objectContaining({ id: sale.id, attempts: 1, error: 'frame number registered twice' }),
    ]);
  });
});

describe('countByStatus', () => {
  it('counts a partition with Select COUNT, narrowed like a listing', async () => {
    // Prepare
    for (const minute of [1, 2, 3]) await acceptRecord('caseRecord', { at: at(minute) });
    await acceptRecord('caseRecord', { at: at(4), owner: 'example-dealer' });
    const from = recorder.calls.length;
    // Act
    const all = await countByStatus('caseRecord', 'accepted');
    const older = await countByStatus('caseRecord', 'accepted', { acceptedBefore: at(3) });
    const ofClient = await countByStatus('caseRecord', 'accepted', { owner: 'example-dealer' });
    const none = await countByStatus('caseRecord', 'failed');
    // Assess
    expect([all, older, ofClient, none]).toEqual([4, 2, 1, 0]);
    expect(callsSince(from)).toEqual(['Query:status', 'Query:status', 'Query:status', 'Query:status']);
  });
});

describe('frameRecordIds and readStatusRecord', () => {
  it('finds an owner’s records by frame number through the frame index, oldest first, and only that owner’s', async () => {
    // Prepare: the same frame number at two clients, and another frame.
    const first = await acceptRecord('salesRegistration', { frame: 'JH2X1', at: at(1) });
    const second = await acceptRecord('salesRegistration', { frame: 'JH2X1', at: at(2) });
    await acceptRecord('salesRegistration', { frame: 'JH2X1', owner: 'other-dealer' });
    await acceptRecord('salesRegistration', { frame: 'JH2X2' });
    const from = recorder.calls.length;
    // Act
    const ids = await frameRecordIds('example-dealer', 'JH2X1');
    const older = await frameRecordIds('example-dealer', 'JH2X1', { acceptedBefore: at(2) });
    // Assess
    expect(ids).toEqual([first.id, second.id]);
    expect(older).toEqual([first.id]);
    expect(callsSince(from)).toEqual(['Query:frame', 'Query:frame']);
  });

  it('reads one record in full with a GetItem, and nothing for an unknown id or a content alias', async () => {
    const sale = await acceptRecord('salesRegistration');
    const rejected = await attempt(sale, {
      status: 'rejected',
      error: 'frame number registered twice',
      at: at(1),
    });
    await putContentAliasIfAbsent({
      id: 'alias-1',
      aliasOf: sale.id,
      kind: 'salesRegistration',
      owner: 'example-dealer',
      acceptedAt: at(0),
    });
    const from = recorder.calls.length;
    expect(await readStatusRecord(sale.id)).toEqual(rejected);
    expect(await readStatusRecord('no-such-id')).toBeUndefined();
    expect(await readStatusRecord('alias-1')).toBeUndefined();
    expect(callsSince(from)).toEqual(['GetItem', 'GetItem', 'GetItem']);
  });
});

describe('statusRecordsIn (redrive)', () => {
  it('yields the records of a kind in a state without their personal fields, read consistently page by page, never by a scan', async () => {
    // Prepare: three failed cases, a failed sale.
    const failed = [];
    for (const minute of [1, 2, 3]) {
      failed.push(
        await attempt(await acceptRecord('caseRecord', { at: at(minute) }), {
          status: 'failed',
          error: 'x',
          at: at(9),
        }),
      );
    }
    await attempt(await acceptRecord('salesRegistration'), { status: 'failed', error: 'x', at: at(9) });
    const from = recorder.calls.length;
    // Act
    const records = [];
    for await (const record of statusRecordsIn('caseRecord', 'failed', { pageSize: 2 })) records.push(record);
    // Assess: the records without `record` (what the operators' role may read), oldest first; index pages, each
    // read back with one BatchGetItem.
    expect(records).toEqual(failed.map(({ record: _personal, ...rest }) => rest));
    expect(callsSince(from)).toEqual(['Query:status', 'BatchGetItem', 'Query:status', 'BatchGetItem']);
  });
});
