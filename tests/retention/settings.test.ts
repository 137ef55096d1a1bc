/** The retention settings: defaults, values, and bad values refused with the name of the variable. */
import { describe, expect, it } from 'vitest';
import { retentionTimes } from '../../lib/records/retention.ts';
import { retentionSettings } from '../../lib/settings/settings.ts';
import { startTtlSweeper } from '../../local/ttlSweeper.ts';

describe('retentionSettings', () => {
  it('defaults to 30 days of personal data and 400 days of the record', () => {
    expect(retentionSettings({})).toEqual({ personalDataDays: 30, recordDays: 400, testDays: 7 });
    expect(retentionSettings({ PERSONAL_DATA_RETENTION_DAYS: '', RECORD_RETENTION_DAYS: '' })).toEqual({
      personalDataDays: 30,
      recordDays: 400,
      testDays: 7,
    });
  });

  it('reads whole numbers of days', () => {
    expect(
      retentionSettings({
        PERSONAL_DATA_RETENTION_DAYS: '7',
        RECORD_RETENTION_DAYS: '90',
        TEST_RETENTION_DAYS: '3',
      }),
    ).toEqual({ personalDataDays: 7, recordDays: 90, testDays: 3 });
  });

  it.each(['0', '-1', '1.5', 'thirty', '30d', ' '])('refuses %j, naming the variable', (value) => {
    expect(() => retentionSettings({ PERSONAL_DATA_RETENTION_DAYS: value })).toThrow(
      'setting PERSONAL_DATA_RETENTION_DAYS must be a whole number of at least 1',
    );
    expect(() => retentionSettings({ RECORD_RETENTION_DAYS: value })).toThrow(
      'setting RECORD_RETENTION_DAYS must be a whole number of at least 1',
    );
  });

  it('refuses a bad LOCAL_TTL_SWEEP_SECONDS when npm start starts its TTL sweeper', () => {
    expect(() => startTtlSweeper({ log: () => {}, env: { LOCAL_TTL_SWEEP_SECONDS: 'hourly' } })).toThrow(
      'setting LOCAL_TTL_SWEEP_SECONDS must be a whole number of at least 1',
    );
  });
});

describe('retentionTimes', () => {
  const at = new Date('2026-01-10T12:00:00.000Z');
  const settings = { personalDataDays: 30, recordDays: 400, testDays: 7 };

  it('dates the removal of personal fields after the retention time, and the expiry after the record time', () => {
    expect(retentionTimes('delivered', at, settings)).toEqual({
      purgeAt: '2026-02-09T12:00:00.000Z',
      expiresAt: Date.parse('2027-02-14T12:00:00.000Z') / 1000,
    });
    expect(retentionTimes('rejected', at, settings).purgeAt).toBe('2026-02-09T12:00:00.000Z');
  });

  it('gives a failed record twice the time for its personal fields (it may still be redriven), the same expiry', () => {
    expect(retentionTimes('failed', at, settings)).toEqual({
      purgeAt: '2026-03-11T12:00:00.000Z',
      expiresAt: Date.parse('2027-02-14T12:00:00.000Z') / 1000,
    });
  });
});
