import type { SQSRecord } from 'aws-lambda';
import { deliverMessages } from '../lib/delivery/deliverBatch.ts';
import type { BatchContext } from '../lib/delivery/message.ts';

/**
 * For tests: delivers the stored record one SQS message names, as the worker does a batch of one
 * (lib/delivery/deliverBatch.ts, the one delivery path): the
 * claimed status record's `record`, never the message body's, and records the outcome on it: `delivered`,
 * `rejected`, or, for a transient failure, `accepted` with a backoff on the message's visibility (then throws, so
 * the batch reports it as failed), or `failed` on the record's last try (its message then on the dead-letter
 * queue). A held downstream, a copy meeting another worker's lease, or a message that is no queued record throw too.
 *
 * @example
 * await deliverRecord(sqsRecord, { settings, log: logger, tally: new OutcomeTally() });
 */
export const deliverRecord = async (sqsRecord: SQSRecord, batch: BatchContext): Promise<void> => {
  const [result] = await deliverMessages([sqsRecord], batch);
  if (!result.ok) throw result.error;
};
