import { publishDueEvents } from '../lib/events/publish.ts';
import { errorSummary, logger } from '../lib/observability/logger.ts';
import { publishReconcileMetrics, reconcileOpenRecords } from '../lib/reconcile/reconcile.ts';
import { purgePersonalData } from '../lib/retention/purge.ts';

/**
 * Scheduled (every minute): queues again the `accepted` records nobody has queued or worked on in time, and
 * publishes how many it found (lib/reconcile/reconcile.ts); publishes the state changes left in records' outboxes
 * (lib/events/publish.ts); removes personal data past its retention (lib/retention/purge.ts).
 */
export const handler = async (): Promise<void> => {
  const result = await reconcileOpenRecords();
  publishReconcileMetrics(result);
  const requeued = result.requeued.salesRegistration + result.requeued.caseRecord;
  if (requeued > 0 || result.unqueued > 0) logger.warn('records queued again', { ...result });
  // State changes a worker recorded but could not publish (a crash, the bus unreachable): published now.
  const events = await publishDueEvents();
  if (events.published + events.unpublished > 0) logger.info('pending events published', { ...events });
  // Personal fields of records settled long enough ago (lib/retention); counts only. A failure here is logged, not
  // thrown: the next minute's run tries again, and nothing else in this run waits for it.
  await purgePersonalData().then(
    (purge) => {
      if (purge.purged.salesRegistration + purge.purged.caseRecord + purge.skipped > 0)
        logger.info('personal data removed', { ...purge });
    },
    (error) => logger.error('personal data removal failed', errorSummary(error)),
  );
};
