import { positiveInteger } from '../settings.ts';

/** Reconciler settings, read from the environment. */
export interface ReconcileSettings {
  /**
   * An `accepted` record that nobody has queued or worked on for this long is queued again
   * (`RECONCILE_AFTER_SECONDS`, default 300). Far longer than an intake request can run (API Gateway stops at
   * 29 s), so a live request is never second-guessed.
   */
  reconcileAfterSeconds: number;
  /**
   * The longest wait between two re-queues of the same record (`RECONCILE_MAX_INTERVAL_SECONDS`, default 3600):
   * each re-queue of a record nobody has tried since doubles its wait from reconcileAfterSeconds up to this, so a
   * record waiting in a long queue backlog is not queued again every few minutes.
   */
  maxIntervalSeconds: number;
  /**
   * Records one run queues again at most, per kind (`RECONCILE_MAX_PER_RUN`, default 500): a large backlog is
   * worked off run by run, and the run's other work (events, purge) is never starved by it.
   */
  maxPerRun: number;
  /**
   * The same bound for a kind in the while after its downstream's hold closed (`RECONCILE_MAX_AFTER_HOLD`,
   * default 5000): the records held through the outage are all due at once, and the workers' copies of them are
   * hidden for hours, so the drain is as fast as the reconciler queues them; a run moves them a page (100) at a
   * time, about 50 pages.
   */
  maxAfterHold: number;
}

/**
 * Reads the reconciler's settings.
 *
 * @example
 * reconcileSettings({ RECONCILE_AFTER_SECONDS: '60' }) // { reconcileAfterSeconds: 60, maxIntervalSeconds: 3600, maxPerRun: 500, maxAfterHold: 5000 }
 */
export const reconcileSettings = (env = process.env): ReconcileSettings => ({
  reconcileAfterSeconds: positiveInteger('RECONCILE_AFTER_SECONDS', env.RECONCILE_AFTER_SECONDS, 300),
  maxIntervalSeconds: positiveInteger(
    'RECONCILE_MAX_INTERVAL_SECONDS',
    env.RECONCILE_MAX_INTERVAL_SECONDS,
    3600,
  ),
  maxPerRun: positiveInteger('RECONCILE_MAX_PER_RUN', env.RECONCILE_MAX_PER_RUN, 500),
  maxAfterHold: positiveInteger('RECONCILE_MAX_AFTER_HOLD', env.RECONCILE_MAX_AFTER_HOLD, 5000),
});

/**
 * How long after its `requeues`-th re-queue (0 for the first) a record nobody has tried is due again: the
 * reconcile delay doubled per earlier re-queue, at most the longest interval (and never below the delay).
 *
 * @example
 * requeueDelaySeconds(2, { reconcileAfterSeconds: 300, maxIntervalSeconds: 3600 }) // 1200
 */
export const requeueDelaySeconds = (
  requeues: number,
  settings: Pick<ReconcileSettings, 'reconcileAfterSeconds' | 'maxIntervalSeconds'>,
): number =>
  Math.max(
    settings.reconcileAfterSeconds,
    Math.min(settings.maxIntervalSeconds, settings.reconcileAfterSeconds * 2 ** Math.min(requeues, 30)),
  );
