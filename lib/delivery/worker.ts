import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { OutcomeTally } from '../observability/metrics.ts';
import type { DownstreamHolds } from '../outage/hold.ts';
import { deliverySettings } from '../settings/settings.ts';
import { deliverMessages } from './deliverBatch.ts';
import { DeliveryHeldError } from './errors.ts';

/**
 * Creates the delivery worker (see {@link deliveryWorker}); `holds` lets a test run two worker instances, each with
 * its own view of the shared holds, in one process.
 *
 * @example
 * const otherInstance = createDeliveryWorker({ holds: createDownstreamHolds() });
 */
export const createDeliveryWorker =
  (options: { holds?: DownstreamHolds } = {}) =>
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const settings = deliverySettings();
    const tally = new OutcomeTally();
    try {
      // The whole batch at once: one hold check, one batched downstream call (lib/delivery/deliverBatch.ts).
      const results = await deliverMessages(event.Records, { settings, log: logger, tally, ...options });
      const byMessage = new Map(event.Records.map((record, index) => [record.messageId, results[index]]));
      // A batch that waits out a hold has not failed: its messages are reported (SQS keeps them, hidden until the
      // next probe) without an invocation error, or the workers' Errors alarm would fire for every held batch.
      const allHeld =
        results.length > 0 &&
        results.every((result) => !result.ok && result.error instanceof DeliveryHeldError);
      // Powertools reports each message's result (`ReportBatchItemFailures`) and throws when every one failed.
      // A processor per invocation: it keeps the batch's state, and invocations may overlap (local poller).
      return await processPartialResponse(
        event,
        async (record: SQSRecord) => {
          const result = byMessage.get(record.messageId);
          if (result && !result.ok) throw result.error;
        },
        new BatchProcessor(EventType.SQS),
        { context, throwOnFullBatchFailure: !allHeld },
      );
    } finally {
      tally.publish();
    }
  };

/**
 * The delivery worker: the records of an SQS batch are delivered together, in one batched call per downstream
 * (while it is not held), and only the messages that failed are reported back (`ReportBatchItemFailures`), so a
 * failing record never fails its neighbours. When every message fails, Powertools throws, so a whole-batch failure
 * never reports success; a batch whose every message waits out a hold is reported message by message instead. The
 * batch's outcome metrics are published once at the end.
 *
 * @example
 * const { batchItemFailures } = await deliveryWorker(sqsEvent, context);
 */
export const deliveryWorker = createDeliveryWorker();
