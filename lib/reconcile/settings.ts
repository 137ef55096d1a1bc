import { positiveInteger } from '../settings.ts';

/** Reconciler settings, read from the environment. */
export interface ReconcileSettings {
  /**
   * An `accepted` record that nobody has queued or worked on for this long is queued again
   * (`RECONCILE_AFTER_SECONDS`, default 300). Far longer than an intake request can run (API Gateway stops at
   * 29 s), so a live request is never second-guessed.
   */
  reconcileAfterSeconds: number;
}

/**
 * Reads the reconciler's settings.
 *
 * @example
 * reconcileSettings({ RECONCILE_AFTER_SECONDS: '60' }) // { reconcileAfterSeconds: 60 }
 */
export const reconcileSettings = (env = process.env): ReconcileSettings => ({
  reconcileAfterSeconds: positiveInteger('RECONCILE_AFTER_SECONDS', env.RECONCILE_AFTER_SECONDS, 300),
});

/**
 * The time `seconds` after `from`, as the ISO text the `open` index sorts by.
 *
 * @example
 * dueAfter(new Date('2026-11-22T10:00:00Z'), 300) // '2026-11-22T10:05:00.000Z'
 */
export const dueAfter = (from: Date, seconds: number): string =>
  new Date(from.getTime() + seconds * 1000).toISOString();
