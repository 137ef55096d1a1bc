import { type DueEventsResult, publishDueEvents } from '../outbox/publish.ts';
import { type PurgeResult, purgePersonalData } from '../retention/purge.ts';
import { type ReconcileResult, reconcileOpenRecords } from './reconcile.ts';

/** A step's result, or what stopped it (a step never stops the run: the next run tries again). */
export type StepResult<T> = T | { error: unknown };

/** What one run of the reconciler did. */
export interface ReconcilerRun {
  events: StepResult<DueEventsResult>;
  purge: StepResult<PurgeResult>;
  reconciled: StepResult<ReconcileResult>;
}

const reported = <T>(step: Promise<T>): Promise<StepResult<T>> => step.catch((error: unknown) => ({ error }));

/**
 * One run of the reconciler, as the scheduled function makes it on AWS every minute and `npm start` at its
 * interval: publishes the state changes left in records' outboxes (lib/outbox/publish.ts), removes personal data
 * past its retention (lib/retention/purge.ts), then queues again the `accepted` records nobody has queued or worked
 * on in time (lib/reconcile/reconcile.ts). Each step has its own bound per run and none waits for or is stopped by
 * another: the re-queue comes last, so a large backlog of records to queue again never delays the events or the
 * purge, and a step that fails is reported while the others go on. The caller reports the result in its own way.
 *
 * @example
 * const { events, purge, reconciled } = await runReconciler();
 */
export const runReconciler = async (): Promise<ReconcilerRun> => {
  // State changes a worker recorded but could not publish (a crash, the bus unreachable).
  const events = await reported(publishDueEvents());
  // Personal fields of records settled long enough ago.
  const purge = await reported(purgePersonalData());
  const reconciled = await reported(reconcileOpenRecords());
  return { events, purge, reconciled };
};
