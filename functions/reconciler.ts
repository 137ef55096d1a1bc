import { logger } from '../lib/observability/logger.ts';
import { publishReconcileMetrics, reconcileOpenRecords } from '../lib/reconcile/reconcile.ts';

/**
 * Scheduled (every minute): queues again the `accepted` records nobody has queued or worked on in time, and
 * publishes how many it found. See lib/reconcile/reconcile.ts.
 */
export const handler = async (): Promise<void> => {
  const result = await reconcileOpenRecords();
  publishReconcileMetrics(result);
  const requeued = result.requeued.salesRegistration + result.requeued.caseRecord;
  if (requeued > 0 || result.unqueued > 0) logger.warn('records queued again', { ...result });
};
