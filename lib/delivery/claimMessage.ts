import { messageBody } from '../queue/sendRecords.ts';
import type { StatusRecord } from '../records/types.ts';
import { queueUrlFor } from '../settings/settings.ts';
import { claimRecord } from '../store/statusUpdates.ts';
import type { Downstream } from '../types.ts';
import { sendToDeadLetterQueue } from './deadLetters.ts';
import { DeliveryRetryLaterError } from './errors.ts';
import { deadLettered } from './isolation.ts';
import { type BatchContext, changeVisibility, keysOf, type ReadMessage } from './message.ts';

/** A record this worker holds the lease of, for one delivery. */
export interface ClaimedMessage extends ReadMessage {
  status: StatusRecord;
  leaseUntil: string;
}

const secondsUntil = (iso: string, now: Date) =>
  Math.max(1, Math.ceil((Date.parse(iso) - now.getTime()) / 1000));

/**
 * Claims the record a message names (a lease, which counts the try): the claimed record, or undefined when the
 * message is done without a delivery: its record missing (dropped, logged as an error), `failed` (its message put on
 * the dead-letter queue, which the failing worker may not have managed), or settled (dropped). A copy whose record
 * another worker is delivering right now waits (visibility) until that lease ends, without spending a try, and
 * throws {@link DeliveryRetryLaterError} so the batch keeps it.
 *
 * @example
 * const claimed = await claimMessage(read, 'erp', batch, new Date(), leaseUntil);
 */
export const claimMessage = async (
  read: ReadMessage,
  downstream: Downstream,
  batch: BatchContext,
  claimedAt: Date,
  leaseUntil: string,
): Promise<ClaimedMessage | undefined> => {
  const { log } = batch;
  const { message } = read;
  const keys = keysOf(read, downstream);
  const claim = await claimRecord(message.id, { now: claimedAt, leaseUntil });
  if (claim.claimed) return { ...read, status: claim.claimed, leaseUntil };
  const { current } = claim;
  if (!current) {
    log.error('no status record: message dropped', keys);
    return undefined;
  }
  if (current.status === 'failed' && !deadLettered(current)) {
    log.info('test record failed: message dropped (test records never reach a dead-letter queue)', keys);
    return undefined;
  }
  if (current.status === 'failed') {
    await sendToDeadLetterQueue(queueUrlFor(message.kind), messageBody(message));
    log.info('record failed: message to the dead-letter queue', keys);
    return undefined;
  }
  if (current.status !== 'accepted') {
    log.info('record already settled: message dropped', { ...keys, status: current.status });
    return undefined;
  }
  // Another copy is being delivered right now (maybe in this very batch): come back when its lease has run out.
  const delaySeconds = secondsUntil(current.leaseUntil ?? leaseUntil, claimedAt);
  await changeVisibility(read, delaySeconds);
  log.info('record being delivered by another worker: message waits', { ...keys, delaySeconds });
  throw new DeliveryRetryLaterError(current.tries ?? 0, delaySeconds);
};
