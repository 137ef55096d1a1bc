import { positiveInteger } from '../settings.ts';
import type { RecordStatus } from './types.ts';

const DAY_MS = 86_400_000;

/** How long what is kept, read from the environment. */
export interface RetentionSettings {
  /**
   * Days after a record settled that its personal fields are removed (`PERSONAL_DATA_RETENTION_DAYS`, default 30);
   * a `failed` record keeps them twice as long, unless it is redriven first.
   */
  personalDataDays: number;
  /**
   * Days after a record settled that its status record (ids, frame number, owner, state, attempts, times,
   * downstream id, redacted error) expires by TTL (`RECORD_RETENTION_DAYS`, default 400).
   */
  recordDays: number;
}

/**
 * Reads the retention settings.
 *
 * @example
 * retentionSettings({ PERSONAL_DATA_RETENTION_DAYS: '7' }) // { personalDataDays: 7, recordDays: 400 }
 */
export const retentionSettings = (env = process.env): RetentionSettings => ({
  personalDataDays: positiveInteger('PERSONAL_DATA_RETENTION_DAYS', env.PERSONAL_DATA_RETENTION_DAYS, 30),
  recordDays: positiveInteger('RECORD_RETENTION_DAYS', env.RECORD_RETENTION_DAYS, 400),
});

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
