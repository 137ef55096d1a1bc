/**
 * The settings module: each setting is read from the process's environment once per cold start and remembered
 * until resetSettings(); an environment given is read as it is; a bad value's error names the variable.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resetSettings } from '../../lib/settings/environment.ts';
import { outageSettings, queueUrlFor, reconcileSettings, recordsTable } from '../../lib/settings/settings.ts';

const saved = { ...process.env };

afterEach(() => {
  for (const name of ['RECONCILE_MAX_PER_RUN', 'RECORDS_TABLE', 'CASE_QUEUE_URL', 'OUTAGE_PROBE_SECONDS']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  resetSettings();
});

describe('settings', () => {
  it('reads the environment once: a change is seen only after resetSettings()', () => {
    // Prepare
    process.env.RECONCILE_MAX_PER_RUN = '7';
    const first = reconcileSettings().maxPerRun;
    // Act
    process.env.RECONCILE_MAX_PER_RUN = '9';
    const remembered = reconcileSettings().maxPerRun;
    resetSettings();
    const reread = reconcileSettings().maxPerRun;
    // Assess
    expect([first, remembered, reread]).toEqual([7, 7, 9]);
  });

  it('remembers each setting on its own: reading one does not fix another', () => {
    // Prepare
    process.env.RECORDS_TABLE = 'records-a';
    expect(recordsTable()).toBe('records-a');
    // Act
    process.env.CASE_QUEUE_URL = 'http://127.0.0.1:9/queue/cases';
    // Assess
    expect(queueUrlFor('caseRecord')).toBe('http://127.0.0.1:9/queue/cases');
    expect(recordsTable()).toBe('records-a');
  });

  it('reads an environment given as it is, and remembers nothing of it', () => {
    // Act
    const given = reconcileSettings({ RECONCILE_MAX_PER_RUN: '3' });
    // Assess
    expect(given.maxPerRun).toBe(3);
    expect(reconcileSettings({}).maxPerRun).toBe(500);
  });

  it('names the variable of a bad or missing value, and reads it again next time (a failure is not remembered)', () => {
    // Prepare
    process.env.OUTAGE_PROBE_SECONDS = '0';
    delete process.env.RECORDS_TABLE;
    // Act, Assess
    expect(() => outageSettings()).toThrow(
      'setting OUTAGE_PROBE_SECONDS must be a whole number of at least 1',
    );
    expect(() => recordsTable()).toThrow('setting RECORDS_TABLE is not set');
    process.env.OUTAGE_PROBE_SECONDS = '12';
    process.env.RECORDS_TABLE = 'records-b';
    expect(outageSettings().probeSeconds).toBe(12);
    expect(recordsTable()).toBe('records-b');
  });
});
