import type { SQSRecord } from 'aws-lambda';
import { MAX_COLLECTION_SIZE } from '../downstream/crm/index.ts';
import { DEFAULT_ERP_BATCH_SIZE, erpConfigFromEnv } from '../downstream/erp/index.ts';
import { failedWhole, notSentAfter } from '../downstream/inChunks.ts';
import type { DeliveryOutcome } from '../downstream/types.ts';
import { heldVisibilitySeconds } from '../outage/heldVisibility.ts';
import { downstreamHolds } from '../outage/hold.ts';
import type { DeliveryPermit } from '../outage/types.ts';
import { dueAfter } from '../records/due.ts';
import { outageSettings } from '../settings/settings.ts';
import { type Settled, settleBounded } from './bounded.ts';
import { type ClaimedMessage, claimMessage } from './claimMessage.ts';
import { type DownstreamDelivery, deliverAllToDownstream, downstreamOf } from './downstreams.ts';
import { DeliveryHeld } from './errors.ts';
import { noteDelivery, notedOutcomesOf } from './holdOutcomes.ts';
import {
  BATCH_CONCURRENCY,
  type BatchContext,
  changeVisibility,
  parseQueuedRecord,
  type ReadMessage,
} from './message.ts';
import { recordOutcome } from './recordOutcome.ts';

/** How one message of the batch ended: done (the batch deletes it), or failed with why (SQS keeps it). */
export type MessageResult = Settled<void>;

/**
 * The downstream could not even be tried: settings missing or a secret unreadable. Transient, so the records
 * wait (and show why) while operations mend the configuration; the texts name settings, never values. One
 * outcome object for all: it is one failed call.
 */
const unreachable = (error: unknown): DeliveryOutcome => ({
  kind: 'transient',
  error: `not attempted: ${error instanceof Error ? error.message : 'unknown error'}`,
  reachedDownstream: false,
});

/** An answer that decided nothing for a record (never expected: the adapters answer every id). */
const undecided: DeliveryOutcome = {
  kind: 'transient',
  error: 'the downstream answer decided nothing for this record',
  reachedDownstream: false,
};

const ok: MessageResult = { ok: true, value: undefined };

/**
 * For each outcome of one delivery, in order, whether its transient failure is not the record's own: the record
 * was never sent (an earlier call failed as a whole, the token or CSRF fetch failed, the downstream could not be
 * tried), or its call failed as a whole for several records (the adapters give every record of such a call the
 * same outcome object). A record alone in a call that failed cannot be told from a record that makes its call
 * fail: that failure is its own.
 *
 * @example
 * const down = { kind: 'transient', error: 'HTTP 503', reachedDownstream: true } as const;
 * notOwnFailures([down, down, { kind: 'transient', error: 'UNABLE_TO_LOCK_ROW', reachedDownstream: true }]);
 * // [true, true, false]
 */
export const notOwnFailures = (outcomes: readonly DeliveryOutcome[]): boolean[] => {
  const sharedBy = new Map<DeliveryOutcome, number>();
  for (const outcome of outcomes) sharedBy.set(outcome, (sharedBy.get(outcome) ?? 0) + 1);
  return outcomes.map(
    (outcome) =>
      outcome.kind === 'transient' &&
      (!outcome.reachedDownstream || outcome.notSent === true || (sharedBy.get(outcome) ?? 0) > 1),
  );
};

/** Every message of a held downstream goes back unclaimed, hidden until about the next probe. */
const holdBack = async (
  reads: readonly ReadMessage[],
  permit: Extract<DeliveryPermit, { deliver: false }>,
  downstream: 'erp' | 'crm',
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
    result.ok ? { ok: false, error: new DeliveryHeld(permit.heldSince, delaySeconds) } : result,
  );
};

/**
 * The records one call to the downstream carries (SAP: ERP_BATCH_SIZE; Salesforce: a Collections call's 200). A
 * probe is one call (CONTRACT 3): the rest of its batch waits as held messages do. Settings that cannot be read
 * give the default; the delivery itself then reports them.
 */
const oneCallSize = (downstream: 'erp' | 'crm'): number => {
  if (downstream === 'crm') return MAX_COLLECTION_SIZE;
  try {
    return erpConfigFromEnv().batchSize ?? DEFAULT_ERP_BATCH_SIZE;
  } catch {
    return DEFAULT_ERP_BATCH_SIZE;
  }
};

/** One downstream's messages of the batch: one hold check, then call by call the claims, the call, the outcomes. */
const deliverToOneDownstream = async (
  reads: readonly ReadMessage[],
  downstream: 'erp' | 'crm',
  batch: BatchContext,
  granted?: DeliveryPermit,
): Promise<MessageResult[]> => {
  const clock = () => batch.now?.() ?? new Date();
  const holds = batch.holds ?? downstreamHolds();
  const { probeSeconds } = batch.outage ?? outageSettings();
  const claimedAt = clock();
  // A probe's one call, split off below, comes with the permit it was granted (never asked twice).
  const permit = granted ?? (await holds.mayDeliver(downstream, claimedAt));
  if (!permit.deliver) return holdBack(reads, permit, downstream, batch, claimedAt, probeSeconds);
  const callSize = oneCallSize(downstream);
  if (permit.probe && reads.length > callSize) {
    // The probe's one call; the others wait for the next probe (or the close), unclaimed.
    const hold = await holds.holdState(downstream, { now: claimedAt });
    const heldSince = hold.heldSince ?? claimedAt.toISOString();
    const waiting = {
      deliver: false as const,
      heldSince,
      until: hold.nextProbeAt ?? dueAfter(claimedAt, probeSeconds),
      reason: hold.reason ?? 'outage',
    };
    const [probed, waited] = await Promise.all([
      deliverToOneDownstream(reads.slice(0, callSize), downstream, batch, permit),
      holdBack(reads.slice(callSize), waiting, downstream, batch, claimedAt, probeSeconds),
    ]);
    return [...probed, ...waited];
  }

  const leaseUntil = dueAfter(claimedAt, batch.settings.leaseSeconds);
  const results: MessageResult[] = reads.map(() => ok);
  // One call at a time, in the batch's order: each call's records are claimed just before it and their outcomes
  // recorded while the next call goes out, so the first records of a batch (a quiet client's: the fair queue puts
  // them first) are delivered after one call, not after the batch's last. After a call that failed as a whole,
  // the later records are not sent (lib/downstream/inChunks.ts).
  let earlierFailure: DeliveryOutcome | undefined;
  const recorded: Promise<void>[] = [];
  try {
    for (let start = 0; start < reads.length; start += callSize) {
      const part = await deliverOneCall(reads.slice(start, start + callSize), downstream, batch, {
        permit,
        claimedAt,
        leaseUntil,
        probeSeconds,
        earlierFailure,
      });
      earlierFailure ??= part.failedWhole;
      recorded.push(
        part.results.then((settled) =>
          settled.forEach((result, position) => {
            results[start + position] = result;
          }),
        ),
      );
    }
  } finally {
    // Outcomes already under way are recorded whatever stopped the batch.
    await Promise.allSettled(recorded);
  }
  await Promise.all(recorded);
  return results;
};

/**
 * One call of a batch: its records claimed (the lease, which counts the try), one call to the downstream (or, after
 * an earlier call failed whole, none: `notSent`), the call's outcomes counted in the hold; resolves once that is
 * done, with `results` still recording each record's outcome and its event (lib/delivery/recordOutcome.ts).
 */
const deliverOneCall = async (
  reads: readonly ReadMessage[],
  downstream: 'erp' | 'crm',
  batch: BatchContext,
  call: {
    permit: Extract<DeliveryPermit, { deliver: true }>;
    claimedAt: Date;
    leaseUntil: string;
    probeSeconds: number;
    earlierFailure?: DeliveryOutcome;
  },
): Promise<{ results: Promise<MessageResult[]>; failedWhole?: DeliveryOutcome }> => {
  const clock = () => batch.now?.() ?? new Date();
  const holds = batch.holds ?? downstreamHolds();
  const claims = await settleBounded(reads, BATCH_CONCURRENCY, (read) =>
    claimMessage(read, downstream, batch, call.claimedAt, call.leaseUntil),
  );
  const results: MessageResult[] = claims.map((claim) => (claim.ok ? ok : claim));
  const claimed: { claim: ClaimedMessage; index: number }[] = [];
  claims.forEach((claim, index) => {
    if (claim.ok && claim.value) claimed.push({ claim: claim.value, index });
  });
  if (claimed.length === 0) return { results: Promise.resolve(results) };

  const notSent = call.earlierFailure && notSentAfter(call.earlierFailure);
  // One batched call (or the single call for a lone record) for the claimed records of this part.
  const delivery: DownstreamDelivery = notSent
    ? { outcomes: new Map(claimed.map(({ claim }) => [claim.status.id, notSent])) }
    : await deliverAllToDownstream(
        downstream,
        claimed.map(({ claim }) => claim.status),
      ).catch((error: unknown) => {
        const outcome = unreachable(error);
        return { outcomes: new Map(claimed.map(({ claim }) => [claim.status.id, outcome])) };
      });
  const at = clock();
  const outcomeOf = (id: string) => delivery.outcomes.get(id) ?? undecided;
  const ids = claimed.map(({ claim }) => claim.status.id);
  const reached = ids.some((id) => outcomeOf(id).reachedDownstream);
  const noted = notedOutcomesOf(ids, new Map(ids.map((id) => [id, outcomeOf(id)])), {
    probe: call.permit.probe,
    // A usage the adapter remembers from an earlier answer says nothing about this call.
    ...(reached && delivery.apiUsage ? { apiUsage: delivery.apiUsage } : {}),
  });
  const hold = await noteDelivery(holds, downstream, noted, { probe: call.permit.probe, at, log: batch.log });

  const notOwn = notOwnFailures(ids.map(outcomeOf));
  const written = settleBounded(claimed, BATCH_CONCURRENCY, ({ claim }, position) =>
    recordOutcome(claim, outcomeOf(claim.status.id), downstream, batch, {
      at,
      hold,
      probeSeconds: call.probeSeconds,
      notOwnFailure: notOwn[position],
    }),
  ).then((settled) => {
    settled.forEach((result, position) => {
      results[claimed[position].index] = result;
    });
    return results;
  });
  // A failure of the whole call stops the batch's later calls; a lone record's own failure does not.
  const failure = notSent ? undefined : failedWhole(delivery.outcomes);
  const stops = failure && (!failure.reachedDownstream || claimed.length > 1);
  return { results: written, ...(stops ? { failedWhole: failure } : {}) };
};

/**
 * Delivers the records an SQS batch names (CONTRACT section 3): every message is read, the downstream's hold is
 * asked once (held: every message goes back unclaimed and hidden, nothing reaches the downstream; a due probe:
 * this batch is it), then one batched call at a time (SAP `$batch` of ERP_BATCH_SIZE, Salesforce Collections of
 * 200; a lone record by the single call): its records are claimed (the lease, which counts the try), the call is
 * made, its outcomes are counted in the hold (a whole-call failure once), and each record's outcome is recorded
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
  const groups = new Map<'erp' | 'crm', { read: ReadMessage; index: number }[]>();
  sqsRecords.forEach((sqsRecord, index) => {
    try {
      const message = parseQueuedRecord(sqsRecord.body);
      const downstream = downstreamOf(message.kind);
      groups.set(downstream, [...(groups.get(downstream) ?? []), { read: { sqsRecord, message }, index }]);
    } catch (error) {
      results[index] = { ok: false, error };
    }
  });
  for (const [downstream, members] of groups) {
    const settled = await deliverToOneDownstream(
      members.map(({ read }) => read),
      downstream,
      batch,
    );
    settled.forEach((result, position) => {
      results[members[position].index] = result;
    });
  }
  return results;
};
