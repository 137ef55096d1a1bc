/**
 * Every test starts by forgetting the settings the service has read (lib/settings/environment.ts reads each once
 * per cold start): tests set the environment in their hooks, and a value read by an earlier test must not stand.
 * A test that changes the environment in its own body, after the service has read it, calls resetSettings() too.
 */
import { beforeEach } from 'vitest';
import { resetSettings } from '../lib/settings/environment.ts';

beforeEach(() => {
  resetSettings();
});
