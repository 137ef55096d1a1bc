import { type RetentionSettings, retentionSettings } from '../settings/settings.ts';
import type { RecordStatus } from './types.ts';

const DAY_MS = 86_400_000;

/** When a record settled at `at` loses its personal fields (`purgeAt`) and when it expires (`expiresAt`). */
export interface RetentionTimes {
  /** ISO time: the sort key of the sparse `purge` index. */
  purgeAt: string;
  /** Epoch seconds: the table's TTL attribute. */
  expiresAt: number;
}

/**
 * The retention times of a record that has just settled in `status` at `at`; a test record's (`test`) are
 * TEST_RETENTION_DAYS for everything, unless its personal fields go sooner.
 *
 * @example
 * retentionTimes('failed', new Date('2026-01-01T00:00:00Z'), { personalDataDays: 30, recordDays: 400, testDays: 7 })
 * // { purgeAt: '2026-03-02T00:00:00.000Z', expiresAt: 1801785600 }
 */
export const retentionTimes = (
  status: Exclude<RecordStatus, 'accepted'>,
  at: Date,
  settings: RetentionSettings = retentionSettings(),
  test = false,
): RetentionTimes => {
  const personalDays = status === 'failed' ? 2 * settings.personalDataDays : settings.personalDataDays;
  const keptDays = test ? settings.testDays : settings.recordDays;
  return {
    purgeAt: new Date(at.getTime() + Math.min(personalDays, keptDays) * DAY_MS).toISOString(),
    expiresAt: Math.floor((at.getTime() + keptDays * DAY_MS) / 1000),
  };
};
