import { errorSummary, logger } from '../lib/observability/logger.ts';
import { publishReconcileMetrics } from '../lib/reconcile/reconcile.ts';
import { runReconciler } from '../lib/reconcile/reconcilerRun.ts';

/**
 * Scheduled (every minute): one run of the reconciler (lib/reconcile/reconcilerRun.ts): records queued again,
 * outboxes published, personal data removed; its metrics and counts (never personal data) in the logs.
 */
export const handler = async (): Promise<void> => {
  const { reconciled, events, purge } = await runReconciler();
  publishReconcileMetrics(reconciled);
  const requeued = reconciled.requeued.salesRegistration + reconciled.requeued.caseRecord;
  if (requeued > 0 || reconciled.unqueued > 0) logger.warn('records queued again', { ...reconciled });
  if (events.published + events.unpublished > 0) logger.info('pending events published', { ...events });
  if ('error' in purge) logger.error('personal data removal failed', errorSummary(purge.error));
  else if (purge.purged.salesRegistration + purge.purged.caseRecord + purge.skipped > 0)
    logger.info('personal data removed', { ...purge });
};
