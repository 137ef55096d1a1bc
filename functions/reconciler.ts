import { errorSummary, logger } from '../lib/observability/logger.ts';
import { flushSpans } from '../lib/observability/tracing.ts';
import { publishReconcileMetrics } from '../lib/reconcile/reconcile.ts';
import { runReconciler } from '../lib/reconcile/reconcilerRun.ts';

/**
 * Scheduled (every minute): one run of the reconciler (lib/reconcile/reconcilerRun.ts): outboxes published,
 * personal data removed, records queued again; its metrics and counts (never personal data) in the logs.
 */
const run = async (): Promise<void> => {
  const { reconciled, events, purge } = await runReconciler();
  if ('error' in events) logger.error('pending events not published', errorSummary(events.error));
  else if (events.unpublished > 0) {
    // Events held back run after run (the bus down, the feed's writes too slow to keep their date) are late
    // events for every client: operators see it, and why.
    const { cause, ...counts } = events;
    logger.warn('pending events not published', { ...counts, ...errorSummary(cause) });
  } else if (events.published > 0) logger.info('pending events published', { ...events });
  if ('error' in purge) logger.error('personal data removal failed', errorSummary(purge.error));
  else if (purge.purged.salesRegistration + purge.purged.caseRecord + purge.skipped > 0)
    logger.info('personal data removed', { ...purge });
  if ('error' in reconciled) {
    logger.error('records not queued again', errorSummary(reconciled.error));
    return;
  }
  publishReconcileMetrics(reconciled);
  const requeued = reconciled.requeued.salesRegistration + reconciled.requeued.caseRecord;
  if (requeued > 0 || reconciled.unqueued > 0 || reconciled.deferred.length > 0)
    logger.warn('records queued again', { ...reconciled });
};

/**
 * The run, its spans (events published late, in their records' traces) sent before it returns: a scheduled
 * function takes no middleware chain, so it flushes as traceFlush would.
 */
export const handler = async (): Promise<void> => {
  try {
    await run();
  } finally {
    await flushSpans().catch(() => undefined);
  }
};
