import type { Logger } from '@aws-lambda-powertools/logger';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { sqsClient } from '../aws/clients.ts';
import { queueUrlFor } from '../config.ts';
import type { OutcomeTally } from '../observability/metrics.ts';
import { recordAttempt } from '../store/statusUpdates.ts';
import type { StatusRecord } from '../store/types.ts';
import type { DeliveryOutcome, QueuedRecord } from '../types.ts';
import { deliverToDownstream, downstreamOf } from './downstreams.ts';
import { DeliveryAttemptsExhausted, DeliveryRetryLater, MalformedMessageError } from './errors.ts';
import { type DeliverySettings, retryDelaySeconds } from './settings.ts';

/** Reads a message body written by intake; anything else is refused. */
export const parseQueuedRecord = (body: string): QueuedRecord => {
  try {
    const message = JSON.parse(body) as QueuedRecord;
    if (
      typeof message.id === 'string' &&
      typeof message.kind === 'string' &&
      message.record &&
      typeof message.record === 'object'
    ) {
      return message;
    }
  } catch {
    // fall through
  }
  throw new MalformedMessageError();
};

const changeVisibility = (message: QueuedRecord, sqsRecord: SQSRecord, seconds: number) =>
  sqsClient().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrlFor(message.kind),
      ReceiptHandle: sqsRecord.receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );

/**
 * The downstream could not even be tried: settings missing or a secret unreadable. Transient, so the record
 * waits (and shows why) while operations mend the configuration; the texts name settings, never values.
 */
const unreachable = (error: unknown): DeliveryOutcome => ({
  kind: 'transient',
  error: `not attempted: ${error instanceof Error ? error.message : 'unknown error'}`,
  reachedDownstream: false,
});

/**
 * The ERP refuses a repeated `RegistrationId` (CONTRACT section 3: 409). When its refusal names this very
 * record's id, our own earlier request got through and only its answer was lost (a worker died between the
 * ERP's answer and the status write): the registration exists once, so the record is delivered.
 */
const ownRepeat = (message: QueuedRecord, outcome: DeliveryOutcome): DeliveryOutcome =>
  outcome.kind === 'permanent' && message.kind === 'salesRegistration' && outcome.error.includes(message.id)
    ? { kind: 'delivered', reachedDownstream: true }
    : outcome;

/** What one invocation of the worker needs besides the record: settings, the batch's status records, a tally. */
export interface BatchContext {
  settings: DeliverySettings;
  log: Logger;
  /** Status records of the batch's ids, read in one consistent call before the records are processed. */
  statuses: Map<string, StatusRecord>;
  tally: OutcomeTally;
}

/**
 * Delivers one SQS record and records the outcome on its status record: `delivered`, `rejected` (permanent
 * refusal, not retried), or, for a transient failure, `accepted` with the error and a backoff set on the
 * message's visibility (then throws, so the batch reports it as failed), or `failed` after the last attempt
 * (then throws, and SQS moves the message to the dead-letter queue).
 * A record that is already settled (a second copy of its message) is skipped without a downstream call.
 *
 * @example
 * await deliverRecord(sqsRecord, { settings, log: logger, statuses, tally: new OutcomeTally() });
 */
export const deliverRecord = async (sqsRecord: SQSRecord, batch: BatchContext): Promise<void> => {
  const { settings, log, tally } = batch;
  const message = parseQueuedRecord(sqsRecord.body);
  const downstream = downstreamOf(message.kind);
  // Keys on every line of this record (not a child logger per record: that costs a Console each).
  const keys = { correlationId: message.requestId, recordId: message.id, downstream };
  const attempt = Number(sqsRecord.attributes?.ApproximateReceiveCount ?? '1');

  const status = batch.statuses.get(message.id);
  if (!status) {
    // Intake took the record back after a 503 (its caller retries and queues it again): nothing to deliver.
    log.warn('no status record: message dropped', keys);
    return;
  }
  if (status.status !== 'accepted') {
    log.info('record already settled: message dropped', { ...keys, status: status.status });
    return;
  }

  const outcome = ownRepeat(message, await deliverToDownstream(message).catch(unreachable));
  const at = new Date();
  const attempts = outcome.reachedDownstream ? 1 : 0;
  if (outcome.kind === 'delivered') {
    await recordAttempt(message.id, {
      status: 'delivered',
      attempts,
      downstreamId: outcome.downstreamId,
      at,
    });
    tally.add('delivered', downstream, at.getTime() - Date.parse(status.acceptedAt));
    log.info('delivered', { ...keys, attempt });
    return;
  }
  if (outcome.kind === 'permanent') {
    await recordAttempt(message.id, { status: 'rejected', attempts, error: outcome.error, at });
    tally.add('rejected', downstream);
    log.warn('rejected by downstream', { ...keys, attempt });
    return;
  }
  if (attempt >= settings.maxAttempts) {
    await recordAttempt(message.id, { status: 'failed', attempts, error: outcome.error, at });
    // Visible again at once, so SQS moves it to the dead-letter queue on the next receive, not after the timeout.
    await changeVisibility(message, sqsRecord, 0);
    tally.add('failed', downstream);
    log.error('attempts exhausted: to the dead-letter queue', { ...keys, attempt });
    throw new DeliveryAttemptsExhausted(attempt);
  }
  await recordAttempt(message.id, { status: 'accepted', attempts, error: outcome.error, at });
  const delaySeconds = retryDelaySeconds(attempt, settings.retryBaseSeconds);
  await changeVisibility(message, sqsRecord, delaySeconds);
  tally.add('retried', downstream);
  log.warn('transient failure: retry later', { ...keys, attempt, delaySeconds });
  throw new DeliveryRetryLater(attempt, delaySeconds);
};
