import { consoleActivitySource } from '../../settings/settings.ts';
import { cloudWatchActivity } from './cloudWatchActivity.ts';
import type { ActivitySource } from './hours.ts';
import { storeActivity } from './storeActivity.ts';

/**
 * The source CONSOLE_ACTIVITY_SOURCE names (lib/settings/settings.ts consoleActivitySource).
 *
 * @example
 * await activitySource().hours(new Date()) // [{ hour: '2026-12-06T22:00:00.000Z', downstream: 'erp', accepted: 3, … }, …]
 */
export const activitySource = (): ActivitySource =>
  consoleActivitySource() === 'store' ? storeActivity : cloudWatchActivity;
