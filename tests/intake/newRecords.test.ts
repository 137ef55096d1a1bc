/**
 * A record as intake first stores it: `accepted`, no attempts, in the `open` index due five minutes on (for the
 * reconciler, should its message never be sent), and a sales record under its owner and frame number in the
 * `frame` index (look-ups by frame number).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { acceptRecords } from '../../lib/intake/acceptRecords.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { CaseRecord, SalesRegistration } from '../../lib/types.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';

beforeAll(async () => {
  await freshAws();
  delete process.env.RECONCILE_AFTER_SECONDS;
});

const NOW = new Date('2026-11-22T08:00:00.000Z');

describe('a new status record', () => {
  it('of a sale: accepted, due in five minutes, with its frame key', async () => {
    // Prepare
    const record = salesRegistrationInput({ FrameNum: uniqueFrame('NEW') }) as unknown as SalesRegistration;
    // Act
    const [id] = await acceptRecords({
      kind: 'salesRegistration',
      records: [record],
      requestId: 'req-sale',
      owner: 'example-dealer',
      now: NOW,
    });
    // Assess
    expect(await getStatusRecord(id)).toEqual({
      id,
      kind: 'salesRegistration',
      status: 'accepted',
      attempts: 0,
      acceptedAt: NOW.toISOString(),
      updatedAt: NOW.toISOString(),
      requestId: 'req-sale',
      // Without a Lambda context: the intake function's timeout on (lib/intake/deadline.ts).
      answerBy: '2026-11-22T08:00:10.000Z',
      owner: 'example-dealer',
      record,
      openKind: 'salesRegistration',
      dueAt: '2026-11-22T08:05:00.000Z',
      frameKey: `example-dealer#${record.FrameNum}`,
      dealer: record.DealerId,
      statusKey: 'salesRegistration#accepted',
    });
  });

  it("of a case: the same, with a frame key of its own when it names a frame number (the console's search), no dealer", async () => {
    const record = caseInput({ frameNo: ` ${uniqueFrame('NEW').toLowerCase()} ` }) as unknown as CaseRecord;
    const withoutFrame = caseInput({ frameNo: undefined }) as unknown as CaseRecord;
    const [id, other] = await acceptRecords({
      kind: 'caseRecord',
      records: [record, withoutFrame],
      requestId: 'req-case',
      owner: 'example-web-forms',
      now: NOW,
    });
    const stored = await getStatusRecord(id);
    expect(stored).toMatchObject({
      kind: 'caseRecord',
      status: 'accepted',
      openKind: 'caseRecord',
      statusKey: 'caseRecord#accepted',
      frameKey: `case:#${record.frameNo?.trim().toUpperCase()}`,
    });
    expect(stored).not.toHaveProperty('dealer');
    expect(await getStatusRecord(other)).not.toHaveProperty('frameKey');
  });
});
