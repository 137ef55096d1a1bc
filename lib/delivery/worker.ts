import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { OutcomeTally } from '../observability/metrics.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import { deliverRecord, parseQueuedRecord } from './deliverRecord.ts';
import { deliverySettings } from './settings.ts';

const processor = new BatchProcessor(EventType.SQS);

/** The ids of the batch's well-formed messages (a malformed one fails on its own, in deliverRecord). */
const idsOf = (event: SQSEvent): string[] =>
  event.Records.flatMap((record) => {
    try {
      return [parseQueuedRecord(record.body).id];
    } catch {
      return [];
    }
  });

/**
 * The delivery worker: every record of an SQS batch is delivered on its own, and only the ones that failed are
 * reported back (`ReportBatchItemFailures`), so a failing record never fails its neighbours. When every record
 * fails, Powertools throws, so a whole-batch failure never reports success. The batch's status records are read
 * in one consistent BatchGetItem first, and its outcome metrics are published once at the end.
 *
 * @example
 * const { batchItemFailures } = await deliveryWorker(sqsEvent, context);
 */
export const deliveryWorker = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const settings = deliverySettings();
  const statuses = await getStatusRecords(idsOf(event), { consistent: true });
  const tally = new OutcomeTally();
  try {
    return await processPartialResponse(
      event,
      (record: SQSRecord) => deliverRecord(record, { settings, log: logger, statuses, tally }),
      processor,
      { context },
    );
  } finally {
    tally.publish();
  }
};
