import type { ReconcileSettings } from '../settings/settings.ts';

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
