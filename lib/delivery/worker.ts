import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger.ts';
import { deliverRecord } from './deliverRecord.ts';
import { deliverySettings } from './settings.ts';

const processor = new BatchProcessor(EventType.SQS);

/**
 * The delivery worker: every record of an SQS batch is delivered on its own, and only the ones that failed are
 * reported back (`ReportBatchItemFailures`), so a failing record never fails its neighbours. When every record
 * fails, Powertools throws, so a whole-batch failure never reports success.
 *
 * @example
 * const { batchItemFailures } = await deliveryWorker(sqsEvent, context);
 */
export const deliveryWorker = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const settings = deliverySettings();
  return processPartialResponse(
    event,
    (record: SQSRecord) => deliverRecord(record, settings, logger),
    processor,
    { context },
  );
};
