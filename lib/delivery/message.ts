import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSRecord } from 'aws-lambda';
import { sqsClient } from '../aws/clients.ts';
import { ChangeMessageVisibilityCommand } from '../aws/jsonProtocol/sqs.ts';
import type { OutcomeTally } from '../observability/metrics.ts';
import { TRACEPARENT } from '../observability/traceContext.ts';
import type { DownstreamHolds } from '../outage/hold.ts';
import { readQueuedRecord } from '../queue/queuedRecord.ts';
import type { DeliverySettings, OutageSettings } from '../settings/settings.ts';
import { queueUrlFor } from '../settings/settings.ts';
import type { Downstream, QueuedRecord } from '../types.ts';
import { MalformedMessageError } from './errors.ts';

/**
 * Reads a message body as the record it names (lib/queue/queuedRecord.ts); anything else is refused. Content an
 * older message carries (`record`) is dropped: the worker delivers what the store holds.
 *
 * @example
 * parseQueuedRecord(sqsRecord.body) // { id, kind, requestId }
 */
export const parseQueuedRecord = (body: string): QueuedRecord => {
  const message = readQueuedRecord(body);
  if (!message) throw new MalformedMessageError();
  return message;
};

/** What one invocation of the worker needs besides its messages: settings, a logger, a tally. */
export interface BatchContext {
  settings: DeliverySettings;
  log: Logger;
  tally: OutcomeTally;
  /** The clock; tests move it. */
  now?: () => Date;
  /** The downstreams' holds as this worker instance sees them; default the container's (downstreamHolds()). */
  holds?: DownstreamHolds;
  /** The hold's settings; default read from the environment. */
  outage?: OutageSettings;
}

/** A message of the batch, read. */
export interface ReadMessage {
  sqsRecord: SQSRecord;
  message: QueuedRecord;
}

/** Claims, outcome writes and visibility changes of one batch run at most this many at once. */
export const BATCH_CONCURRENCY = 16;

/**
 * Hides a message for `seconds` (its backoff, another worker's lease, or a hold), after which SQS delivers it again.
 *
 * @example
 * await changeVisibility(read, 30);
 */
export const changeVisibility = ({ message, sqsRecord }: ReadMessage, seconds: number) =>
  sqsClient().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrlFor(message.kind),
      ReceiptHandle: sqsRecord.receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );

/**
 * The trace context of a message's record: the message's `traceparent` attribute (lib/queue/sendRecords.ts), else
 * the one its status record keeps (a message sent before tracing, or by a producer that lost it).
 */
export const recordTraceparent = (
  sqsRecord: SQSRecord,
  status?: { traceparent?: string },
): string | undefined => sqsRecord.messageAttributes?.[TRACEPARENT]?.stringValue ?? status?.traceparent;

/** Keys on every log line of a message's record (not a child logger per record: that costs a Console each). */
export const keysOf = ({ message }: ReadMessage, downstream: Downstream) => ({
  correlationId: message.requestId,
  recordId: message.id,
  downstream,
});
