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
 * The retention times of a record that has just settled in `status` at `at`.
 *
 * @example
 * retentionTimes('failed', new Date('2026-01-01T00:00:00Z'), { personalDataDays: 30, recordDays: 400 })
 * // { purgeAt: '2026-03-02T00:00:00.000Z', expiresAt: 1801785600 }
 */
export const retentionTimes = (
  status: Exclude<RecordStatus, 'accepted'>,
  at: Date,
  settings: RetentionSettings = retentionSettings(),
): RetentionTimes => {
  const personalDays = status === 'failed' ? 2 * settings.personalDataDays : settings.personalDataDays;
  return {
    purgeAt: new Date(at.getTime() + personalDays * DAY_MS).toISOString(),
    expiresAt: Math.floor((at.getTime() + settings.recordDays * DAY_MS) / 1000),
  };
};
