/**
 * Test records are kept TEST_RETENTION_DAYS after they settled, whole (lib/records/retention.ts); live records as
 * before.
 */
import { describe, expect, it } from 'vitest';
import { retentionTimes } from '../../lib/records/retention.ts';

const settings = { personalDataDays: 30, recordDays: 400, testDays: 7 };
const at = new Date('2026-01-01T00:00:00Z');
const days = (n: number) => at.getTime() + n * 86_400_000;

describe('how long a test record is kept', () => {
  it('expires a settled test record, personal fields and all, TEST_RETENTION_DAYS after it settled', () => {
    // Act
    const delivered = retentionTimes('delivered', at, settings, true);
    const failed = retentionTimes('failed', at, settings, true);
    // Assess
    for (const times of [delivered, failed]) {
      expect(times.expiresAt).toBe(days(7) / 1000);
      expect(Date.parse(times.purgeAt)).toBe(days(7));
    }
  });

  it('keeps a live record as before: 30 days of personal fields (60 if failed), 400 of the record', () => {
    expect(retentionTimes('delivered', at, settings)).toEqual({
      purgeAt: new Date(days(30)).toISOString(),
      expiresAt: days(400) / 1000,
    });
    expect(retentionTimes('failed', at, settings).purgeAt).toBe(new Date(days(60)).toISOString());
  });
});
