import type { DeliveryOutcome } from '../downstream/types.ts';
import { heldVisibilitySeconds } from '../outage/heldVisibility.ts';
import { loneFailure } from '../outage/rules.ts';
import type { HoldState } from '../outage/types.ts';
import { publishAfterOutcome } from '../outbox/publish.ts';
import { messageBody } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import { type StoryEntry, statusNamedIn } from '../records/story.ts';
import { queueUrlFor, reconcileSettings } from '../settings/settings.ts';
import { type AttemptOutcome, recordAttempt } from '../store/statusUpdates.ts';
import type { Downstream } from '../types.ts';
import type { ClaimedMessage } from './claimMessage.ts';
import { sendToDeadLetterQueue } from './deadLetters.ts';
import { DeliveryHeldError, DeliveryRetryLaterError } from './errors.ts';
import { deadLettered, metricMode } from './isolation.ts';
import { type BatchContext, changeVisibility, keysOf } from './message.ts';
import { retryDelaySeconds } from './retryDelay.ts';

/**
 * Whose a record's transient failure is, by the call that carried it: `call`, not its own (the call never reached
 * the downstream, or failed as a whole while it carried others); `alone`, its call carried it alone, reached the
 * downstream and failed; `own`, its part of a call (the downstream's answer for it).
 */
export type FailureVerdict = 'call' | 'alone' | 'own';

/** When the outcome was decided, and the downstream's hold as it stood after the call was counted. */
export interface OutcomeContext {
  at: Date;
  hold: HoldState;
  probeSeconds: number;
  /** Whose the transient failure is, by the call that carried it (see `whoseFailure` in lib/delivery/deliverBatch.ts). */
  failure?: FailureVerdict;
  /** The downstream's recent failure rate when the call went out (HoldState's `failureRate`), if known. */
  failureRate?: number;
  /**
   * The record was claimed but its call was never made (the hold opened, or an earlier call of the batch failed
   * whole, before its turn): the try is given back, uncounted anywhere.
   */
  notSent?: boolean;
  /** How long the downstream call took (ms), measured around the adapter's call; absent when none was made. */
  durationMs?: number;
}

/**
 * What the outcome adds to the record's story (the console's timeline, lib/records/story.ts): the attempt, with the
 * status of the answer that delivered it or, for a failure, the HTTP status its (redacted) text names, and the call's
 * duration, unless no call was made; and a wait in the hold when
 * the held downstream gave its try back. Data passed through only: it decides nothing.
 */
const storyOf = (
  outcome: DeliveryOutcome,
  downstream: Downstream,
  context: OutcomeContext,
  returnTry: boolean,
): StoryEntry[] => {
  const at = context.at.toISOString();
  const entries: StoryEntry[] = [];
  if (!context.notSent) {
    const message = outcome.kind === 'delivered' ? undefined : outcome.error;
    entries.push({
      at,
      type: 'attempt',
      downstream,
      // A delivery keeps its answer's status (the adapter's); a failure's is the one its text names, if any.
      status: outcome.kind === 'delivered' ? (outcome.status ?? null) : statusNamedIn(message),
      ...(message ? { message } : {}),
      durationMs: context.durationMs ?? 0,
    });
  }
  if (context.hold.held && returnTry)
    entries.push({
      at,
      type: 'held',
      downstream,
      heldSince: context.hold.heldSince ?? at,
      ...(context.hold.nextProbeAt ? { until: context.hold.nextProbeAt } : {}),
    });
  return entries;
};

/**
 * The record's whole-call give-backs that still count: those since its downstream's last hold closed (an outage
 * that ended says nothing of the next one).
 *
 * @example
 * callFailuresSince({ callFailures: 3, callFailedAt: '2026-11-27T03:00:00Z' }, { held: false, closedAt: '2026-11-27T04:00:00Z' }) // 0
 */
export const callFailuresSince = (
  status: Pick<ClaimedMessage['status'], 'callFailures' | 'callFailedAt'>,
  hold: HoldState,
): number => {
  const counted = status.callFailures ?? 0;
  const closedAt = hold.closedAt;
  // A count written before stamps existed has no date: it stands.
  return closedAt && status.callFailedAt && status.callFailedAt < closedAt ? 0 : counted;
};

/**
 * Records one claimed record's outcome, as a single call's would be, and publishes its state change at once
 * (publishAfterOutcome; the reconciler only catches up on what this could not publish): `delivered`; `rejected`
 * with the downstream's message; for a transient failure while the downstream is held (a failed probe, or a call
 * under way when the hold opened), `accepted` with the try given back and the message hidden as a held one
 * ({@link DeliveryHeldError}); otherwise `accepted` with the error and a backoff on the message's visibility
 * ({@link DeliveryRetryLaterError}), or `failed` on the record's last try, its message then put on the dead-letter queue.
 *
 * @example
 * await recordOutcome(claimed, outcome, 'erp', batch, { at: new Date(), hold: { held: false }, probeSeconds: 30 });
 */
export const recordOutcome = async (
  claimed: ClaimedMessage,
  outcome: DeliveryOutcome,
  downstream: Downstream,
  batch: BatchContext,
  context: OutcomeContext,
): Promise<void> => {
  const { settings, log, tally } = batch;
  const { status, leaseUntil, message } = claimed;
  const { at, hold } = context;
  const keys = keysOf(claimed, downstream);
  // This try's number, counted on the record by the claim (never SQS's ApproximateReceiveCount).
  const attempt = status.tries ?? 1;
  const attempts = outcome.reachedDownstream ? 1 : 0;
  const record = async (change: Omit<AttemptOutcome, 'attempts' | 'at'>) => {
    const story = storyOf(outcome, downstream, context, change.returnTry === true);
    const written = await recordAttempt(status, { ...change, attempts, at, story }, leaseUntil);
    // Only if a worker ran past its lease: the outcome of the one that holds it now stands.
    if (!written) log.error('lease lost before the outcome was recorded', { ...keys, attempt });
    else if (change.status !== 'accepted' && !(await publishAfterOutcome(written)))
      log.warn('state change not published yet: the reconciler publishes it', { ...keys, attempt });
  };
  if (outcome.kind === 'delivered') {
    await record({ status: 'delivered', downstreamId: outcome.downstreamId });
    tally.add('delivered', downstream, at.getTime() - Date.parse(status.acceptedAt), metricMode(status));
    log.info('delivered', { ...keys, attempt });
    return;
  }
  if (outcome.kind === 'permanent') {
    await record({ status: 'rejected', error: outcome.error });
    tally.add('rejected', downstream, undefined, metricMode(status));
    log.warn('rejected by downstream', { ...keys, attempt });
    return;
  }
  const { reconcileAfterSeconds } = reconcileSettings();
  /** The record stays `accepted` and its message comes back in `delaySeconds` (its re-queue dated after that). */
  const waitAgain = async (
    delaySeconds: number,
    change: Pick<AttemptOutcome, 'returnTry' | 'callFailures' | 'loneFailureChance'>,
  ) => {
    await record({
      status: 'accepted',
      error: outcome.error,
      dueAt: dueAfter(at, delaySeconds + reconcileAfterSeconds),
      ...change,
    });
    await changeVisibility(claimed, delaySeconds);
  };
  if (hold.held) {
    const heldSince = hold.heldSince ?? at.toISOString();
    const delaySeconds = heldVisibilitySeconds(
      { heldSince, until: hold.nextProbeAt ?? at.toISOString() },
      at,
      context.probeSeconds,
    );
    await waitAgain(delaySeconds, { returnTry: true });
    log.info('downstream held: try given back, message waits', { ...keys, heldSince, delaySeconds });
    throw new DeliveryHeldError(heldSince, delaySeconds);
  }
  if (context.notSent) {
    // Never sent: nothing was tried, so nothing is counted; it comes back after the first backoff.
    const delaySeconds = retryDelaySeconds(1, settings.retryBaseSeconds);
    await waitAgain(delaySeconds, { returnTry: true });
    log.info('not sent: try given back, retry later', { ...keys, delaySeconds });
    throw new DeliveryRetryLaterError(attempt, delaySeconds);
  }
  const callFailures = callFailuresSince(status, hold);
  if (context.failure === 'call' && callFailures < settings.maxAttempts) {
    // Only a record's own faults spend its tries (docs/behaviour.md#delivery-and-retries): a call that failed for
    // every record in it says nothing of this one. Such give-backs have a budget of their own; past it the record
    // goes in a call of its own (lib/delivery/deliverBatch.ts), so a record that makes every call it is in fail
    // still ends `failed`, and none ends `failed` through calls that failed whole.
    const delaySeconds = retryDelaySeconds(callFailures + 1, settings.retryBaseSeconds);
    await waitAgain(delaySeconds, { returnTry: true, callFailures: callFailures + 1 });
    tally.add('retried', downstream, undefined, metricMode(status));
    log.warn('call failed for every record in it: try given back, retry later', {
      ...keys,
      attempt,
      callFailures: callFailures + 1,
      delaySeconds,
    });
    throw new DeliveryRetryLaterError(attempt, delaySeconds);
  }
  // Alone in a call that failed: its own, unless the downstream fails so often for everyone that a record with no
  // fault would fail this often too (lib/outage/rules.ts, loneFailure). Its chance is kept either way.
  const lone =
    context.failure === 'alone' ? loneFailure(status.loneFailureChance ?? 1, context.failureRate) : undefined;
  const chance = lone ? { loneFailureChance: lone.chance } : {};
  if (lone?.givenBack) {
    const delaySeconds = retryDelaySeconds(attempt, settings.retryBaseSeconds);
    await waitAgain(delaySeconds, { returnTry: true, ...chance });
    tally.add('retried', downstream, undefined, metricMode(status));
    log.warn('failed alone while the downstream fails often: try given back, retry later', {
      ...keys,
      attempt,
      failureRate: context.failureRate,
      loneFailureChance: lone.chance,
      delaySeconds,
    });
    throw new DeliveryRetryLaterError(attempt, delaySeconds);
  }
  if (attempt >= settings.maxAttempts) {
    await record({ status: 'failed', error: outcome.error });
    tally.add('failed', downstream, undefined, metricMode(status));
    // A test record's failure is what its integrator asked for: no dead letter, no operator's work.
    if (!deadLettered(status)) {
      log.info('test record failed as its last name asks: no dead letter', { ...keys, attempt });
      return;
    }
    log.error('attempts exhausted: to the dead-letter queue', { ...keys, attempt });
    // Should this send fail, the message comes back and, its record `failed`, is sent there on that receive.
    await sendToDeadLetterQueue(queueUrlFor(message.kind), messageBody(message));
    return;
  }
  const delaySeconds = retryDelaySeconds(attempt, settings.retryBaseSeconds);
  await waitAgain(delaySeconds, chance);
  tally.add('retried', downstream, undefined, metricMode(status));
  log.warn('transient failure: retry later', { ...keys, attempt, delaySeconds });
  throw new DeliveryRetryLaterError(attempt, delaySeconds);
};
