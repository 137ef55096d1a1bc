import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSRecord } from 'aws-lambda';
import { sqsClient } from '../aws/clients.ts';
import { ChangeMessageVisibilityCommand } from '../aws/jsonProtocol/sqs.ts';
import { queueUrlFor } from '../config.ts';
import type { DeliveryOutcome } from '../downstream/types.ts';
import { publishAfterOutcome } from '../events/publish.ts';
import type { OutcomeTally } from '../observability/metrics.ts';
import { readQueuedRecord } from '../queue/queuedRecord.ts';
import { messageBody } from '../queue/sendRecords.ts';
import { dueAfter, reconcileSettings } from '../reconcile/settings.ts';
import { type AttemptOutcome, claimRecord, recordAttempt } from '../store/statusUpdates.ts';
import type { QueuedRecord } from '../types.ts';
import { sendToDeadLetterQueue } from './deadLetters.ts';
import { deliverToDownstream, downstreamOf } from './downstreams.ts';
import { DeliveryRetryLater, MalformedMessageError } from './errors.ts';
import { type DeliverySettings, retryDelaySeconds } from './settings.ts';

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

/** What one invocation of the worker needs besides the record: settings, a logger, a tally. */
export interface BatchContext {
  settings: DeliverySettings;
  log: Logger;
  tally: OutcomeTally;
  /** The clock; tests move it. */
  now?: () => Date;
}

const secondsUntil = (iso: string, now: Date) =>
  Math.max(1, Math.ceil((Date.parse(iso) - now.getTime()) / 1000));

/**
 * Delivers the stored record an SQS message names (the claimed status record's `record`, never the message body's)
 * and records the outcome on it: `delivered`, `rejected` (permanent refusal, not retried), or, for a transient
 * failure, `accepted` with the error and a backoff set on the message's visibility (then throws, so the batch
 * reports it as failed), or `failed` on the record's last try (DELIVERY_MAX_ATTEMPTS claims, counted on the
 * record): the worker then puts the message on the dead-letter queue itself and the batch deletes it.
 * The record is claimed first (a lease, which counts the try): a copy of a message whose record is settled is
 * dropped (one of a `failed` record goes to the dead-letter queue), one whose record another worker is delivering
 * right now comes back when that lease ends, without spending a try.
 *
 * @example
 * await deliverRecord(sqsRecord, { settings, log: logger, tally: new OutcomeTally() });
 */
export const deliverRecord = async (sqsRecord: SQSRecord, batch: BatchContext): Promise<void> => {
  const { settings, log, tally } = batch;
  const message = parseQueuedRecord(sqsRecord.body);
  const downstream = downstreamOf(message.kind);
  // Keys on every line of this record (not a child logger per record: that costs a Console each).
  const keys = { correlationId: message.requestId, recordId: message.id, downstream };
  const { reconcileAfterSeconds } = reconcileSettings();

  const claimedAt = batch.now?.() ?? new Date();
  const leaseUntil = dueAfter(claimedAt, settings.leaseSeconds);
  const claim = await claimRecord(message.id, { now: claimedAt, leaseUntil });
  if (!claim.claimed) {
    const { current } = claim;
    if (!current) {
      log.error('no status record: message dropped', keys);
      return;
    }
    if (current.status === 'failed') {
      // Its message reaches the dead-letter queue even if the worker that failed it could not send it there.
      await sendToDeadLetterQueue(queueUrlFor(message.kind), messageBody(message));
      log.info('record failed: message to the dead-letter queue', keys);
      return;
    }
    if (current.status !== 'accepted') {
      log.info('record already settled: message dropped', { ...keys, status: current.status });
      return;
    }
    // Another copy is being delivered right now: come back when its lease has run out.
    const delaySeconds = secondsUntil(current.leaseUntil ?? leaseUntil, claimedAt);
    await changeVisibility(message, sqsRecord, delaySeconds);
    log.info('record being delivered by another worker: message waits', { ...keys, delaySeconds });
    throw new DeliveryRetryLater(current.tries ?? 0, delaySeconds);
  }
  const status = claim.claimed;
  // This try's number, counted on the record by the claim (never SQS's ApproximateReceiveCount).
  const attempt = status.tries ?? 1;

  const outcome = await deliverToDownstream(status).catch(unreachable);
  const at = batch.now?.() ?? new Date();
  const attempts = outcome.reachedDownstream ? 1 : 0;
  const record = async (change: Omit<AttemptOutcome, 'attempts' | 'at'>) => {
    const written = await recordAttempt(status, { ...change, attempts, at }, leaseUntil);
    // Only if a worker ran past its lease: the outcome of the one that holds it now stands.
    if (!written) log.error('lease lost before the outcome was recorded', { ...keys, attempt });
    else if (change.status !== 'accepted' && !(await publishAfterOutcome(written)))
      log.warn('state change not published yet: the reconciler publishes it', { ...keys, attempt });
  };
  if (outcome.kind === 'delivered') {
    await record({ status: 'delivered', downstreamId: outcome.downstreamId });
    tally.add('delivered', downstream, at.getTime() - Date.parse(status.acceptedAt));
    log.info('delivered', { ...keys, attempt });
    return;
  }
  if (outcome.kind === 'permanent') {
    await record({ status: 'rejected', error: outcome.error });
    tally.add('rejected', downstream);
    log.warn('rejected by downstream', { ...keys, attempt });
    return;
  }
  if (attempt >= settings.maxAttempts) {
    await record({ status: 'failed', error: outcome.error });
    tally.add('failed', downstream);
    log.error('attempts exhausted: to the dead-letter queue', { ...keys, attempt });
    // Should this send fail, the message comes back and, its record `failed`, is sent there on that receive.
    await sendToDeadLetterQueue(queueUrlFor(message.kind), messageBody(message));
    return;
  }
  const delaySeconds = retryDelaySeconds(attempt, settings.retryBaseSeconds);
  await record({
    status: 'accepted',
    error: outcome.error,
    dueAt: dueAfter(at, delaySeconds + reconcileAfterSeconds),
  });
  await changeVisibility(message, sqsRecord, delaySeconds);
  tally.add('retried', downstream);
  log.warn('transient failure: retry later', { ...keys, attempt, delaySeconds });
  throw new DeliveryRetryLater(attempt, delaySeconds);
};
