import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { OutcomeTally } from '../observability/metrics.ts';
import { deliverRecord } from './deliverRecord.ts';
import { deliverySettings } from './settings.ts';

const processor = new BatchProcessor(EventType.SQS);

/**
 * The delivery worker: every record of an SQS batch is delivered on its own, and only the ones that failed are
 * reported back (`ReportBatchItemFailures`), so a failing record never fails its neighbours. When every record
 * fails, Powertools throws, so a whole-batch failure never reports success. Each record is claimed before its
 * delivery (see deliverRecord), and the batch's outcome metrics are published once at the end.
 *
 * @example
 * const { batchItemFailures } = await deliveryWorker(sqsEvent, context);
 */
export const deliveryWorker = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const settings = deliverySettings();
  const tally = new OutcomeTally();
  try {
    return await processPartialResponse(
      event,
      (record: SQSRecord) => deliverRecord(record, { settings, log: logger, tally }),
      processor,
      { context },
    );
  } finally {
    tally.publish();
  }
};
