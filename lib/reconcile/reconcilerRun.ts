import { type DueEventsResult, publishDueEvents } from '../events/publish.ts';
import { type PurgeResult, purgePersonalData } from '../retention/purge.ts';
import { type ReconcileResult, reconcileOpenRecords } from './reconcile.ts';

/** What one run of the reconciler did. */
export interface ReconcilerRun {
  reconciled: ReconcileResult;
  events: DueEventsResult;
  /** The purge's counts, or what stopped it (it never stops the run: the next one tries again). */
  purge: PurgeResult | { error: unknown };
}

/**
 * One run of the reconciler, as the scheduled function makes it on AWS every minute and `npm start` at its
 * interval: queues again the `accepted` records nobody has queued or worked on in time (lib/reconcile/reconcile.ts),
 * publishes the state changes left in records' outboxes (lib/events/publish.ts), and removes personal data past
 * its retention (lib/retention/purge.ts). The caller reports the result in its own way.
 *
 * @example
 * const { reconciled, events, purge } = await runReconciler();
 */
export const runReconciler = async (): Promise<ReconcilerRun> => {
  const reconciled = await reconcileOpenRecords();
  // State changes a worker recorded but could not publish (a crash, the bus unreachable): published now.
  const events = await publishDueEvents();
  // Personal fields of records settled long enough ago. A failure is reported, not thrown: nothing else in this
  // run waits for it, and the next run tries again.
  const purge = await purgePersonalData().catch((error: unknown) => ({ error }));
  return { reconciled, events, purge };
};
