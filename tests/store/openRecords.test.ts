import { beforeEach, describe, expect, it } from 'vitest';
import type { StatusRecord } from '../../lib/records/types.ts';
import { openRecordIds, postponeDue } from '../../lib/store/openRecords.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

beforeEach(async () => {
  // A table of its own for every test.
  await freshAws();
});

const accepted = (dueAt: string, changes: Partial<StatusRecord> = {}) => acceptedCase({ dueAt, ...changes });

const pagesOf = async (query: AsyncGenerator<string[]>) => {
  const pages: string[][] = [];
  for await (const page of query) pages.push(page);
  return pages;
};

describe('openRecordIds', () => {
  it('yields the ids page by page, oldest dueAt first', async () => {
    // Prepare: five records, stored in another order than they are due.
    const records = ['08:03', '08:01', '08:05', '08:02', '08:04'].map((time) =>
      accepted(`2026-11-22T${time}:00.000Z`),
    );
    await seedStatusRecords(records);
    const byDue = [...records].sort((a, b) => (a.dueAt as string).localeCompare(b.dueAt as string));
    // Act
    const pages = await pagesOf(openRecordIds('caseRecord', { pageSize: 2 }));
    // Assess
    expect(pages).toEqual([[byDue[0].id, byDue[1].id], [byDue[2].id, byDue[3].id], [byDue[4].id]]);
  });

  it('reads 100 ids a page unless told otherwise', async () => {
    const records = Array.from({ length: 101 }, (_, i) =>
      accepted(`2026-11-22T08:0${Math.floor(i / 60)}:${String(i % 60).padStart(2, '0')}.000Z`),
    );
    await seedStatusRecords(records);
    const pages = await pagesOf(openRecordIds('caseRecord'));
    expect(pages.map((page) => page.length)).toEqual([100, 1]);
  });

  it('with dueBefore, yields only the records due by then, that moment included', async () => {
    const [early, onTheDot, late] = ['08:04:59.999', '08:05:00.000', '08:05:00.001'].map((time) =>
      accepted(`2026-11-22T${time}Z`),
    );
    await seedStatusRecords([early, onTheDot, late]);
    const pages = await pagesOf(openRecordIds('caseRecord', { dueBefore: '2026-11-22T08:05:00.000Z' }));
    expect(pages).toEqual([[early.id, onTheDot.id]]);
  });

  it('yields no page at all when nothing is open or due, and never the records of another kind or settled ones', async () => {
    // Prepare: a sale, a delivered case (out of the index), and a case due later.
    await seedStatusRecords([
      accepted('2026-11-22T08:00:00.000Z', { kind: 'salesRegistration', openKind: 'salesRegistration' }),
      accepted('2026-11-22T08:00:00.000Z', { status: 'delivered', openKind: undefined, dueAt: undefined }),
      accepted('2026-11-22T09:00:00.000Z'),
    ]);
    // Act
    const due = await pagesOf(openRecordIds('caseRecord', { dueBefore: '2026-11-22T08:30:00.000Z' }));
    const sales = await pagesOf(
      openRecordIds('salesRegistration', { dueBefore: '2026-11-22T07:00:00.000Z' }),
    );
    // Assess
    expect(due).toEqual([]);
    expect(sales).toEqual([]);
  });
});

/** When the reconciler runs in these tests. */
const AT = new Date('2026-11-22T08:10:00.000Z');

describe('postponeDue', () => {
  it('moves dueAt only from the value seen, so of two reconcilers only the first moves it', async () => {
    // Prepare
    const record = accepted('2026-11-22T08:05:00.000Z');
    await seedStatusRecords([record]);
    // Act
    const first = await postponeDue(record.id, '2026-11-22T08:05:00.000Z', '2026-11-22T08:11:00.000Z', AT);
    const second = await postponeDue(record.id, '2026-11-22T08:05:00.000Z', '2026-11-22T08:11:00.001Z', AT);
    // Assess
    expect([first, second]).toEqual([true, false]);
    expect(await getStatusRecord(record.id)).toMatchObject({ dueAt: '2026-11-22T08:11:00.000Z' });
  });

  it('leaves a record that is no longer accepted', async () => {
    const record = accepted('2026-11-22T08:05:00.000Z', { status: 'failed' });
    await seedStatusRecords([record]);
    const moved = await postponeDue(record.id, '2026-11-22T08:05:00.000Z', '2026-11-22T08:11:00.000Z', AT);
    expect(moved).toBe(false);
    expect(await getStatusRecord(record.id)).toMatchObject({ status: 'failed', dueAt: record.dueAt });
  });

  it('leaves a record a worker holds a lease on at that time, and moves it once the lease has run out', async () => {
    // Prepare: claimed by a worker until 08:07.
    const record = accepted('2026-11-22T08:05:00.000Z', { leaseUntil: '2026-11-22T08:07:00.000Z' });
    await seedStatusRecords([record]);
    // Act
    const during = await postponeDue(
      record.id,
      '2026-11-22T08:05:00.000Z',
      '2026-11-22T08:11:00.000Z',
      new Date('2026-11-22T08:06:59.999Z'),
    );
    const after = await postponeDue(
      record.id,
      '2026-11-22T08:05:00.000Z',
      '2026-11-22T08:12:00.000Z',
      new Date('2026-11-22T08:07:00.001Z'),
    );
    // Assess
    expect([during, after]).toEqual([false, true]);
    expect(await getStatusRecord(record.id)).toMatchObject({ dueAt: '2026-11-22T08:12:00.000Z' });
  });
});
