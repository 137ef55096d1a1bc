import type { SQSRecord } from 'aws-lambda';
import { type Settled, settleBounded } from '../concurrency/bounded.ts';
import { type CallOutcome, type DeliveryOutcome, wholeCallFailure } from '../downstream/types.ts';
import {
  failSpan,
  inSpan,
  lastHttpStatus,
  type Span,
  startSpan,
  traceparentOfSpan,
  withActiveSpan,
} from '../observability/tracing.ts';
import { heldVisibilitySeconds } from '../outage/heldVisibility.ts';
import { type DownstreamHolds, downstreamHolds } from '../outage/hold.ts';
import type { DeliveryPermit, HoldState } from '../outage/types.ts';
import { dueAfter } from '../records/due.ts';
import { outageSettings } from '../settings/settings.ts';
import type { Downstream } from '../types.ts';
import { type ClaimedMessage, claimMessage } from './claimMessage.ts';
import { type DownstreamCaller, downstreamOf } from './downstreams.ts';
import { DeliveryHeldError, DeliveryRetryLaterError } from './errors.ts';
import { noteDelivery, notedOutcomesOf } from './holdOutcomes.ts';
import { callerFor, type DeliveryMode, holdsFor } from './isolation.ts';
import {
  BATCH_CONCURRENCY,
  type BatchContext,
  changeVisibility,
  parseQueuedRecord,
  type ReadMessage,
  recordTraceparent,
} from './message.ts';
import {
  callFailuresSince,
  type FailureVerdict,
  type OutcomeContext,
  recordOutcome,
} from './recordOutcome.ts';
import { retryDelaySeconds } from './retryDelay.ts';

/** How one message of the batch ended: done (the batch deletes it), or failed with why (SQS keeps it). */
export type MessageResult = Settled<void>;

const ok: MessageResult = { ok: true, value: undefined };

const messageOf = (error: unknown) => (error instanceof Error ? error.message : 'unknown error');

/**
 * The downstream could not even be tried: its settings or its secret cannot be read. Every call fails whole without
 * reaching it, naming the setting (never a value), so the records wait and show why while operations mend the
 * configuration, and the hold, which counts those failures, stops the calls meanwhile.
 */
const unreachableCaller = (error: unknown): DownstreamCaller => ({
  callSize: Number.POSITIVE_INFINITY,
  call: async (stored) =>
    wholeCallFailure(
      stored.map(({ id }) => id),
      { kind: 'transient', error: `not attempted: ${messageOf(error)}`, reachedDownstream: false },
    ),
});

/** An answer that decided nothing for a record (never expected: the adapters answer every id). */
const undecided: DeliveryOutcome = {
  kind: 'transient',
  error: 'the downstream answer decided nothing for this record',
  reachedDownstream: false,
};

/**
 * Whose a record's transient failure is (the one place that decides it from the call): not its own (`call`) when its
 * call never reached the downstream (a token or CSRF fetch failed, the downstream could not be tried), or failed as
 * a whole (the adapter says so: `wholeCall`) while it carried other records too; `alone` when the call carried it
 * alone, reached the downstream and failed: that cannot be told from a record that makes its call fail, so the
 * downstream's recent failure rate decides (lib/delivery/recordOutcome.ts); else its own (`own`).
 *
 * @example
 * const down = { kind: 'transient', error: 'HTTP 503', reachedDownstream: true, wholeCall: true } as const;
 * whoseFailure(down, 3); // 'call'
 * whoseFailure(down, 1); // 'alone'
 */
export const whoseFailure = (outcome: DeliveryOutcome, carried: number): FailureVerdict => {
  if (outcome.kind !== 'transient') return 'own';
  if (!outcome.reachedDownstream || (outcome.wholeCall === true && carried > 1)) return 'call';
  return carried === 1 ? 'alone' : 'own';
};

/** A held downstream's wait, as the outcome writes take it. */
const heldState = (permit: Extract<DeliveryPermit, { deliver: false }>): HoldState => ({
  held: true,
  heldSince: permit.heldSince,
  reason: permit.reason,
  nextProbeAt: permit.until,
});

/** The wait a held downstream's state means, as a permit refused. */
const waitingOn = (
  hold: HoldState,
  now: Date,
  probeSeconds: number,
): Extract<DeliveryPermit, { deliver: false }> => ({
  deliver: false,
  heldSince: hold.heldSince ?? now.toISOString(),
  until: hold.nextProbeAt ?? dueAfter(now, probeSeconds),
  reason: hold.reason ?? 'outage',
});

/** Messages of a held downstream go back unclaimed, hidden until about the next probe; their tries untouched. */
const holdBack = async (
  reads: readonly ReadMessage[],
  permit: Extract<DeliveryPermit, { deliver: false }>,
  downstream: Downstream,
  batch: BatchContext,
  now: Date,
  probeSeconds: number,
): Promise<MessageResult[]> => {
  const delaySeconds = heldVisibilitySeconds(permit, now, probeSeconds);
  const hidden = await settleBounded(reads, BATCH_CONCURRENCY, (read) =>
    changeVisibility(read, delaySeconds),
  );
  batch.log.info('downstream held: messages wait unclaimed', {
    downstream,
    reason: permit.reason,
    heldSince: permit.heldSince,
    messages: reads.length,
    delaySeconds,
  });
  return hidden.map((result) =>
    result.ok ? { ok: false, error: new DeliveryHeldError(permit.heldSince, delaySeconds) } : result,
  );
};

/** Messages whose calls were not made (an earlier call failed whole) go back unclaimed after the first backoff. */
const handBack = async (
  reads: readonly ReadMessage[],
  downstream: Downstream,
  batch: BatchContext,
): Promise<MessageResult[]> => {
  const delaySeconds = retryDelaySeconds(1, batch.settings.retryBaseSeconds);
  const hidden = await settleBounded(reads, BATCH_CONCURRENCY, (read) =>
    changeVisibility(read, delaySeconds),
  );
  batch.log.info('an earlier call failed whole: messages wait unclaimed', {
    downstream,
    messages: reads.length,
    delaySeconds,
  });
  return hidden.map((result) =>
    result.ok ? { ok: false, error: new DeliveryRetryLaterError(0, delaySeconds) } : result,
  );
};

/** What one batch's delivery to one downstream shares between its calls. */
interface Delivery {
  downstream: Downstream;
  /** `test`: test records, answered by the simulators (docs/API.md, "Test mode"). */
  mode: DeliveryMode;
  caller: DownstreamCaller;
  /** The downstream's hold; for test records one that is never held and learns nothing. */
  holds: DownstreamHolds;
  batch: BatchContext;
  probeSeconds: number;
  clock: () => Date;
}

/**
 * One downstream's messages of the batch, call by call: before each call the hold is read (fresh, so a hold this
 * batch's own call or another instance opened stops it); held: the rest go back unclaimed; a due probe: this call
 * is it. After a call that failed whole the
 * later calls are not made, their messages handed back unclaimed.
 */
const deliverToOneDownstream = async (
  reads: readonly ReadMessage[],
  downstream: Downstream,
  mode: 'live' | 'test',
  batch: BatchContext,
): Promise<MessageResult[]> => {
  const clock = () => batch.now?.() ?? new Date();
  const holds = holdsFor(mode, batch.holds ?? downstreamHolds());
  const { probeSeconds } = batch.outage ?? outageSettings();
  const caller = await callerFor(downstream, mode).catch(unreachableCaller);
  const delivery: Delivery = { downstream, mode, caller, holds, batch, probeSeconds, clock };
  const results: MessageResult[] = reads.map(() => ok);
  const place = (from: number, settled: readonly MessageResult[]) =>
    settled.forEach((result, position) => {
      results[from + position] = result;
    });
  // Each call's outcomes are recorded while the next call goes out, so the first records of a batch (a quiet
  // client's: the fair queue puts them first) are delivered after one call, not after the batch's last.
  const recorded: Promise<void>[] = [];
  try {
    let start = 0;
    while (start < reads.length) {
      const at = clock();
      // Read fresh before every call, never from the cache: nothing but the probe reaches a held downstream, also
      // when another instance opened the hold a moment ago (one consistent read per call of up to 50 or 200).
      const permit = await holds.mayDeliver(downstream, at, { fresh: true });
      if (!permit.deliver) {
        place(start, await holdBack(reads.slice(start), permit, downstream, batch, at, probeSeconds));
        break;
      }
      const from = start;
      const part = reads.slice(start, start + caller.callSize);
      start += part.length;
      const sent = await deliverPart(part, delivery, permit, at);
      recorded.push(sent.results.then((settled) => place(from, settled)));
      if (sent.failedWhole && start < reads.length) {
        // Held now (by this call or another instance): the rest wait as held messages do; else after a backoff.
        const now = clock();
        const hold = await holds.holdState(downstream, { fresh: true, now });
        const rest = reads.slice(start);
        place(
          start,
          hold.held
            ? await holdBack(rest, waitingOn(hold, now, probeSeconds), downstream, batch, now, probeSeconds)
            : await handBack(rest, downstream, batch),
        );
        break;
      }
    }
  } finally {
    // Outcomes already under way are recorded whatever stopped the batch.
    await Promise.allSettled(recorded);
  }
  await Promise.all(recorded);
  return results;
};

/**
 * One slice of the batch (at most one call's worth): its records claimed (the lease, which counts the try), then
 * its calls: a call of its own for each record whose whole-call give-backs are spent (so what fails then is its
 * own), and one call for the others (first when the slice is the probe); the hold asked again (fresh) before every
 * call after the first. Resolves once
 * the calls are made and counted, with `results` still recording each record's outcome and its event.
 */
const deliverPart = async (
  reads: readonly ReadMessage[],
  delivery: Delivery,
  permit: Extract<DeliveryPermit, { deliver: true }>,
  claimedAt: Date,
): Promise<{ results: Promise<MessageResult[]>; failedWhole: boolean }> => {
  const { downstream, batch } = delivery;
  const leaseUntil = dueAfter(claimedAt, batch.settings.leaseSeconds);
  const claims = await settleBounded(reads, BATCH_CONCURRENCY, (read) =>
    claimMessage(read, downstream, batch, claimedAt, leaseUntil),
  );
  const results: MessageResult[] = claims.map((claim) => (claim.ok ? ok : claim));
  const claimed: { claim: ClaimedMessage; index: number }[] = [];
  claims.forEach((claim, index) => {
    if (claim.ok && claim.value) claimed.push({ claim: claim.value, index });
  });
  // The stored record decides, never the message: a record whose mode is not this delivery's is not sent here.
  const misrouted = claimed.filter(
    ({ claim }) => (claim.status.test === true) !== (delivery.mode === 'test'),
  );
  for (const { claim } of misrouted)
    batch.log.error('record of the other mode: not sent', { recordId: claim.status.id, mode: delivery.mode });
  if (misrouted.length > 0) {
    const release = recordAll(
      misrouted,
      () => ({ kind: 'transient', error: 'not sent: a message of the other mode', reachedDownstream: false }),
      delivery,
      { at: claimedAt, hold: { held: false }, probeSeconds: delivery.probeSeconds, notSent: true },
      results,
    );
    claimed.splice(0, claimed.length, ...claimed.filter((entry) => !misrouted.includes(entry)));
    if (claimed.length === 0) return { results: release.then(() => results), failedWhole: false };
    const rest = await deliverClaimed(claimed, delivery, permit, claimedAt, results);
    return {
      results: Promise.all([release, rest.results]).then(() => results),
      failedWhole: rest.failedWhole,
    };
  }
  if (claimed.length === 0) return { results: Promise.resolve(results), failedWhole: false };
  return deliverClaimed(claimed, delivery, permit, claimedAt, results);
};

/** The calls of a slice's claimed records (see deliverPart). */
const deliverClaimed = async (
  claimed: { claim: ClaimedMessage; index: number }[],
  delivery: Delivery,
  permit: Extract<DeliveryPermit, { deliver: true }>,
  claimedAt: Date,
  results: MessageResult[],
): Promise<{ results: Promise<MessageResult[]>; failedWhole: boolean }> => {
  const { downstream, batch, holds } = delivery;

  const hold = await holds.holdState(downstream, { now: claimedAt });
  const spent = (entry: { claim: ClaimedMessage }) =>
    callFailuresSince(entry.claim.status, hold) >= batch.settings.maxAttempts;
  const together = claimed.filter((entry) => !spent(entry));
  const alone = claimed.filter(spent).map((entry) => [entry]);
  // A probe goes with the records that have not failed every call they were in: a record that did (maybe the cause,
  // a poison) first in line would probe alone, fail, and keep the hold shut for everyone, probe after probe.
  const calls = together.length ? (permit.probe ? [together, ...alone] : [...alone, together]) : alone;

  const written: Promise<void>[] = [];
  let failedWhole = false;
  let callPermit: DeliveryPermit = permit;
  for (const [position, call] of calls.entries()) {
    const at = delivery.clock();
    if (position > 0 && !failedWhole) callPermit = await holds.mayDeliver(downstream, at, { fresh: true });
    if (!callPermit.deliver || failedWhole) {
      // Claimed but not sent: each gets its try back (held: hidden until about the next probe).
      const unsent = calls.slice(position).flat();
      const context = {
        at,
        hold: callPermit.deliver ? { held: false } : heldState(callPermit),
        probeSeconds: delivery.probeSeconds,
        notSent: true,
      };
      const error = callPermit.deliver
        ? 'not sent: an earlier call of this delivery failed whole'
        : 'not sent: the downstream is held';
      written.push(
        recordAll(
          unsent,
          () => ({ kind: 'transient', error, reachedDownstream: false }),
          delivery,
          context,
          results,
        ),
      );
      break;
    }
    const made = await makeCall(call, delivery, callPermit, hold.failureRate);
    failedWhole = made.failedWhole !== undefined;
    written.push(
      recordAll(
        call,
        (id) => made.outcomes.get(id) ?? undecided,
        delivery,
        made.context,
        results,
        made.attempts,
      ),
    );
  }
  return { results: Promise.all(written).then(() => results), failedWhole };
};

/** Each record's attempt span, open until its outcome is recorded, and the status the call was answered with. */
type Attempts = Map<string, { span: Span; httpStatus?: number }>;

/** One call to the downstream for claimed records, counted in the hold. */
const makeCall = async (
  call: readonly { claim: ClaimedMessage }[],
  delivery: Delivery,
  permit: Extract<DeliveryPermit, { deliver: true }>,
  /** The downstream's recent failure rate before the call (as the slice's calls began), if known. */
  failureRate: number | undefined,
): Promise<CallOutcome & { context: OutcomeContext & { carried: number }; attempts: Attempts }> => {
  const { downstream, caller, batch, holds } = delivery;
  const ids = call.map(({ claim }) => claim.status.id);
  // Each record's delivery attempt is a span of its own trace (contract section 8); the call is one span: a child of
  // its record's attempt when it carries one, else a span of its own linked to every record's attempt (no record's
  // trace is its parent more than another's).
  const spans = call.map(({ claim }) =>
    startSpan(`deliver ${claim.status.kind}`, {
      parent: recordTraceparent(claim.sqsRecord, claim.status),
      kind: 'consumer',
      attributes: {
        'record.id': claim.status.id,
        'record.downstream': downstream,
        'call.records': ids.length,
      },
    }),
  );
  const placement =
    spans.length === 1
      ? { parent: traceparentOfSpan(spans[0]) }
      : { root: true as const, links: spans.map(traceparentOfSpan) };
  // The call's duration, for each record's timeline (lib/records/story.ts): measured around the adapter's call.
  const startedAt = performance.now();
  let httpStatus: number | undefined;
  const outcome = await inSpan(
    `${downstream} call`,
    { ...placement, attributes: { 'call.records': ids.length } },
    async (span) => {
      const made = await caller.call(call.map(({ claim }) => claim.status)).catch((error: unknown) =>
        wholeCallFailure(ids, {
          kind: 'transient',
          error: `not attempted: ${messageOf(error)}`,
          reachedDownstream: false,
        }),
      );
      httpStatus = lastHttpStatus(span);
      // A call that failed as a whole (nothing of it judged a record) is a failed span itself.
      if (made.failedWhole !== undefined) failSpan(span, 'call failed whole', httpStatus);
      return made;
    },
  );
  const attempts: Attempts = new Map(ids.map((id, index) => [id, { span: spans[index], httpStatus }]));
  const durationMs = Math.round(performance.now() - startedAt);
  const answeredAt = delivery.clock();
  const noted = notedOutcomesOf(ids, outcome.outcomes, {
    probe: permit.probe,
    ...(outcome.apiUsage ? { apiUsage: outcome.apiUsage } : {}),
  });
  const answered = ids.filter((id) => {
    const part = outcome.outcomes.get(id);
    return part !== undefined && part.kind !== 'transient';
  }).length;
  const hold = await noteDelivery(holds, downstream, noted, {
    probe: permit.probe,
    at: answeredAt,
    log: batch.log,
    parts: { carried: ids.length, answered },
  });
  return {
    ...outcome,
    attempts,
    context: {
      at: answeredAt,
      hold,
      probeSeconds: delivery.probeSeconds,
      carried: ids.length,
      failureRate,
      durationMs,
    },
  };
};

/** Records the outcome of each of `call`'s records into `results` (at the record's place in the slice). */
const recordAll = async (
  call: readonly { claim: ClaimedMessage; index: number }[],
  outcomeOf: (id: string) => DeliveryOutcome,
  delivery: Delivery,
  context: OutcomeContext & { carried?: number },
  results: MessageResult[],
  attempts?: Attempts,
): Promise<void> => {
  const settled = await settleBounded(call, BATCH_CONCURRENCY, async ({ claim }) => {
    const outcome = outcomeOf(claim.status.id);
    const record = () =>
      recordOutcome(claim, outcome, delivery.downstream, delivery.batch, {
        ...context,
        failure: whoseFailure(outcome, context.carried ?? call.length),
      });
    const attempt = attempts?.get(claim.status.id);
    if (!attempt) return record();
    // The outcome's write, its event and its log lines belong to the attempt's span, which ends with them.
    if (outcome.kind !== 'delivered') failSpan(attempt.span, outcome.kind, attempt.httpStatus);
    try {
      return await withActiveSpan(attempt.span, record);
    } finally {
      attempt.span.end();
    }
  });
  settled.forEach((result, position) => {
    results[call[position].index] = result;
  });
};

/**
 * Delivers the records an SQS batch names (docs/behaviour.md#batching): every message is read, then one call at a time
 * (SAP `$batch` of ERP_BATCH_SIZE, Salesforce Collections of 200; a lone record by the single call), the
 * downstream's hold asked before each (held: the rest go back unclaimed and hidden, nothing more reaches the
 * downstream; a due probe: that call is it): its records are claimed (the lease, which counts the try), the call is
 * made, its outcomes are counted in the hold (lib/delivery/holdOutcomes.ts), and each record's outcome is recorded
 * and its event published as a single delivery's would be (lib/delivery/recordOutcome.ts).
 *
 * @returns one result per message, in order: done, or failed with the reason SQS keeps it (its visibility set).
 * @example
 * const results = await deliverMessages(event.Records, { settings, log: logger, tally });
 * results.filter((result) => !result.ok).length; // messages the batch reports as failed
 */
export const deliverMessages = async (
  sqsRecords: readonly SQSRecord[],
  batch: BatchContext,
): Promise<MessageResult[]> => {
  const results: MessageResult[] = sqsRecords.map(() => ok);
  // All messages of one queue are one kind; grouping keeps a mixed batch right all the same.
  // Test records go apart (docs/API.md, "Test mode"): a test call and a live call never share a downstream call.
  const groups = new Map<string, { read: ReadMessage; index: number }[]>();
  sqsRecords.forEach((sqsRecord, index) => {
    try {
      const message = parseQueuedRecord(sqsRecord.body);
      const group = `${downstreamOf(message.kind)} ${message.test ? 'test' : 'live'}`;
      groups.set(group, [...(groups.get(group) ?? []), { read: { sqsRecord, message }, index }]);
    } catch (error) {
      results[index] = { ok: false, error };
    }
  });
  for (const [group, members] of groups) {
    const [downstream, mode] = group.split(' ') as [Downstream, 'live' | 'test'];
    const settled = await deliverToOneDownstream(
      members.map(({ read }) => read),
      downstream,
      mode,
      batch,
    );
    settled.forEach((result, position) => {
      results[members[position].index] = result;
    });
  }
  return results;
};
