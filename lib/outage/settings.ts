import { positiveInteger } from '../settings.ts';

/** Settings of the downstream hold (CONTRACT section 3, "Outages: waited out, not failed"). */
export interface OutageSettings {
  /** `OUTAGE_AFTER_FAILURES` (default 5): transient failures in a row, of at least 2 records, that open a hold. */
  afterFailures: number;
  /** `OUTAGE_PROBE_SECONDS` (default 30): at most one probe per this many seconds across all workers. */
  probeSeconds: number;
  /** `CRM_API_USAGE_SHARE` (default 0.8): a used/allowed share at or above it holds the CRM. */
  apiUsageShare: number;
  /**
   * `OUTAGE_STATE_CACHE_SECONDS` (default 5, 0 = always read): how long a worker instance trusts the hold it last
   * read before a success or a permit reads it again. See lib/outage/hold.ts for what it saves and risks.
   */
  cacheSeconds: number;
}

const share = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0 || parsed > 1)
    throw new Error(`setting ${name} must be a number above 0 and at most 1`);
  return parsed;
};

const seconds = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`setting ${name} must be a whole number of at least 0`);
  return parsed;
};

/**
 * Reads the hold's settings from the environment; a bad value throws an error naming the setting and its rule.
 *
 * @example
 * outageSettings({ OUTAGE_PROBE_SECONDS: '10' }) // { afterFailures: 5, probeSeconds: 10, apiUsageShare: 0.8, cacheSeconds: 5 }
 */
export const outageSettings = (env = process.env): OutageSettings => ({
  afterFailures: positiveInteger('OUTAGE_AFTER_FAILURES', env.OUTAGE_AFTER_FAILURES, 5),
  probeSeconds: positiveInteger('OUTAGE_PROBE_SECONDS', env.OUTAGE_PROBE_SECONDS, 30),
  apiUsageShare: share('CRM_API_USAGE_SHARE', env.CRM_API_USAGE_SHARE, 0.8),
  cacheSeconds: seconds('OUTAGE_STATE_CACHE_SECONDS', env.OUTAGE_STATE_CACHE_SECONDS, 5),
});
