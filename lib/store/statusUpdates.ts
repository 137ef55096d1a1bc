import type { AttributeValue, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { ConditionalCheckFailedException, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { dueAfter } from '../records/due.ts';
import { openKindOf, statusKeyOf } from '../records/keys.ts';
import { retentionTimes } from '../records/retention.ts';
import { nextSequenceOf, pendingChangeOf } from '../records/stateChange.ts';
import { encodeStoryEntry, STORY_LIMIT, type StoryEntry, storyWith } from '../records/story.ts';
import type { HistoryEntry, RecordStatus, StatusRecord } from '../records/types.ts';
import { recordsTable } from '../settings/settings.ts';
import { fromItem, getStatusRecord } from './statusRecords.ts';

/** What claiming a record for delivery found. */
export type ClaimResult =
  | { claimed: StatusRecord }
  /** Not claimed: the record as it is (settled, or leased by another worker), or undefined when it does not exist. */
  | { claimed?: undefined; current: StatusRecord | undefined };

/**
 * Claims an `accepted` record for one delivery: a conditional write that succeeds only when no other worker holds
 * an unexpired lease, so two copies of a message never reach the downstream together. The same write counts the
 * try (`tries`): a copy that meets another worker's lease, or a message the reconciler queued again, counts
 * nothing, and a worker that dies after its claim has still spent one (a record that kills its worker ends). The reconciler leaves a
 * leased record alone (lib/store/openRecords.ts postponeDue), so the claim need not move `dueAt`: it writes no
 * attribute of any index (each move in the `open` index cost two index writes per record).
 *
 * @example
 * const claim = await claimRecord(id, { now, leaseUntil });
 * if (claim.claimed) deliver(claim.claimed);
 */
export const claimRecord = async (
  id: string,
  claim: { now: Date; leaseUntil: string },
): Promise<ClaimResult> => {
  try {
    const out = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'SET leaseUntil = :lease, tries = if_not_exists(tries, :zero) + :one',
        ConditionExpression:
          '#status = :accepted AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':lease': { S: claim.leaseUntil },
          ':now': { S: claim.now.toISOString() },
          ':accepted': { S: 'accepted' },
          ':zero': { N: '0' },
          ':one': { N: '1' },
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { claimed: fromItem(out.Attributes ?? {}) };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return { current: await getStatusRecord(id) };
    throw error;
  }
};

export interface AttemptOutcome {
  /** `accepted` for a transient failure that will be retried. */
  status: RecordStatus;
  /** 1 when the delivery request reached the downstream system, else 0. */
  attempts: 0 | 1;
  downstreamId?: string;
  error?: string;
  at: Date;
  /** For `accepted`: when the reconciler looks at it next (after the retry is due). */
  dueAt?: string;
  /**
   * For `accepted`: give back the try the claim counted (`tries`), because the downstream was held (a failed
   * probe, or a call under way when the hold opened): an outage spends no record's tries.
   */
  returnTry?: boolean;
  /**
   * With `returnTry`, when the try is given back because its call failed as a whole: the record's count of such
   * give-backs since its downstream's last hold closed (`callFailures`, stamped `callFailedAt`).
   */
  callFailures?: number;
  /** For `accepted`: the record's `loneFailureChance` after a failure alone in its call (lib/outage/rules.ts). */
  loneFailureChance?: number;
  /** The entries of the record's story this attempt adds (the attempt, a hold's wait), written in the same write. */
  story?: readonly StoryEntry[];
}

/** Unpublished events are published by the reconciler once they have waited this long (the worker tries at once). */
export const EVENTS_DUE_AFTER_SECONDS = 60;

const listOf = (entry: object): AttributeValue => ({
  L: [{ M: marshall(entry, { removeUndefinedValues: true }) }],
});

/**
 * Adds story entries to an update's expression (lib/records/story.ts), in the write it belongs to: appended while
 * the story stays within its bound (so a story the writer did not read is kept); past it, the whole story as read
 * with the oldest dropped. Only writes that hold the record as it is use it (under the lease, or conditional on
 * `updatedAt`); webhook entries live apart (`webhookStory`), so no other writer touches `story`.
 */
const addStory = (
  read: Pick<StatusRecord, 'id' | 'story'>,
  entries: readonly StoryEntry[] | undefined,
  set: string[],
  values: Record<string, AttributeValue>,
  names: Record<string, string>,
): void => {
  if (!entries || entries.length === 0) return;
  names['#story'] = 'story';
  if ((read.story?.length ?? 0) + entries.length <= STORY_LIMIT) {
    set.push('#story = list_append(if_not_exists(#story, :emptyStory), :storyAdded)');
    values[':emptyStory'] = { L: [] };
    values[':storyAdded'] = {
      L: entries.map((entry) => ({ S: encodeStoryEntry(entry, { recordId: read.id }) })),
    };
  } else {
    set.push('#story = :story');
    values[':story'] = {
      L: storyWith(read.story, entries, { recordId: read.id }).map((entry) => ({ S: entry })),
    };
  }
};

/**
 * Records the outcome of one delivery attempt in one write and releases the claim. Only the worker whose lease
 * (`leaseUntil`) is still on the record moves it. The same write appends the attempt to the record's `history`,
 * keeps `statusKey` in step, and when the record settles takes it out of the `open` index, puts the change's
 * event in its outbox (`pendingEvents`, the `events` index) and dates the removal of its personal fields and its
 * expiry (lib/retention). `claimed` is the record as the claim returned it: under the lease nobody else changes it.
 *
 * @returns the record as written, or undefined when the lease was no longer ours (nothing changed).
 * @example
 * await recordAttempt(claimed, { status: 'delivered', attempts: 1, downstreamId: '4900000017', at: new Date() }, lease);
 */
export const recordAttempt = async (
  claimed: StatusRecord,
  outcome: AttemptOutcome,
  leaseUntil: string,
): Promise<StatusRecord | undefined> => {
  const set = [
    '#status = :status',
    'statusKey = :statusKey',
    'attempts = if_not_exists(attempts, :zero) + :attempts',
    'updatedAt = :at',
    '#history = list_append(if_not_exists(#history, :empty), :step)',
  ];
  // A try resets the spacing of the reconciler's re-queues (lib/reconcile): the record is moving again.
  const remove = ['leaseUntil', 'requeues'];
  const values: Record<string, AttributeValue> = {
    ':status': { S: outcome.status },
    ':statusKey': { S: statusKeyOf(claimed.kind, outcome.status) },
    ':attempts': { N: String(outcome.attempts) },
    ':zero': { N: '0' },
    ':at': { S: outcome.at.toISOString() },
    ':accepted': { S: 'accepted' },
    ':lease': { S: leaseUntil },
    ':empty': { L: [] },
    ':step': listOf({
      at: outcome.at.toISOString(),
      status: outcome.status,
      reached: outcome.attempts === 1,
      downstreamId: outcome.downstreamId,
      error: outcome.error,
    } satisfies HistoryEntry),
  };
  if (outcome.downstreamId) {
    set.push('downstreamId = :downstreamId');
    values[':downstreamId'] = { S: outcome.downstreamId };
  }
  if (outcome.error) {
    set.push('#error = :error');
    values[':error'] = { S: outcome.error };
  } else {
    remove.push('#error');
  }
  if (outcome.status === 'accepted') {
    if (outcome.returnTry) {
      // The lease condition below guarantees our claim's count is on the record.
      set.push('tries = tries - :one');
      values[':one'] = { N: '1' };
      if (outcome.callFailures !== undefined) {
        // Absolute, not added: the count restarts after a hold closed (lib/delivery/recordOutcome.ts), and under
        // the lease nobody else writes it.
        set.push('callFailures = :callFailures', 'callFailedAt = :at');
        values[':callFailures'] = { N: String(outcome.callFailures) };
      }
    }
    if (outcome.loneFailureChance !== undefined) {
      set.push('loneFailureChance = :chance');
      values[':chance'] = { N: String(outcome.loneFailureChance) };
    }
    if (outcome.dueAt) {
      set.push('dueAt = :due');
      values[':due'] = { S: outcome.dueAt };
    }
  } else {
    remove.push('openKind', 'dueAt');
    // Under the lease nobody else changes the record, so the claim's `eventSequence` is its latest.
    const sequence = nextSequenceOf(claimed);
    const event = pendingChangeOf(claimed, {
      state: outcome.status,
      attempts: claimed.attempts + outcome.attempts,
      sequence,
      at: outcome.at,
      downstreamId: outcome.downstreamId,
      error: outcome.error,
    });
    const retention = retentionTimes(outcome.status, outcome.at, undefined, claimed.test === true);
    const { purgeAt } = retention;
    // Never sooner than it already expires: a content's first record is kept for its newer generations.
    const expiresAt = Math.max(retention.expiresAt, claimed.expiresAt ?? 0);
    set.push(
      'pendingEvents = list_append(if_not_exists(pendingEvents, :empty), :event)',
      'eventSequence = :sequence',
      'eventsKind = :kind',
      'eventsDueAt = :eventsDue',
      'purgeKind = :kind',
      'purgeAt = :purgeAt',
      'expiresAt = :expiresAt',
    );
    values[':event'] = listOf(event);
    values[':sequence'] = { N: String(sequence) };
    values[':kind'] = { S: claimed.kind };
    values[':eventsDue'] = { S: dueAfter(outcome.at, EVENTS_DUE_AFTER_SECONDS) };
    values[':purgeAt'] = { S: purgeAt };
    values[':expiresAt'] = { N: String(expiresAt) };
  }
  const names: Record<string, string> = { '#status': 'status', '#error': 'error', '#history': 'history' };
  addStory(claimed, outcome.story, set, values, names);
  return updatedRecord({
    TableName: recordsTable(),
    Key: { pk: { S: claimed.id } },
    UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
    ConditionExpression: '#status = :accepted AND leaseUntil = :lease',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  });
};

/**
 * Puts a `failed` record back to `accepted` (redrive), in the `open` index with `dueAt`: if no message of it comes
 * back (it expired from the dead-letter queue), the reconciler queues it then. Its tries start again from 0 (a
 * redrive gives it the full number); attempts and the last error stay as history; the redrive is appended to it, its `accepted` event goes to the outbox, and the removal of its personal
 * fields and its expiry are called off until it settles again. Only the record as read (`current.updatedAt`) is
 * reopened, and never one whose personal fields are already removed (it could not be delivered).
 *
 * @returns the record as written, or undefined when it was not `failed` as read (or has lost its personal fields).
 * @example
 * await reopenFailedRecord(failedRecord, { at: new Date(), dueAt });
 */
export const reopenFailedRecord = async (
  current: StatusRecord,
  reopen: { at: Date; dueAt: string; by?: string },
): Promise<StatusRecord | undefined> => {
  // The condition on `updatedAt` makes `current.eventSequence` the latest.
  const sequence = nextSequenceOf(current);
  const event = pendingChangeOf(current, {
    state: 'accepted',
    attempts: current.attempts,
    sequence,
    at: reopen.at,
  });
  // The redrive and who made it, in the console's timeline (the same write; its condition makes `current` the latest).
  const storySet: string[] = [];
  const storyValues: Record<string, AttributeValue> = {};
  const names: Record<string, string> = { '#status': 'status', '#kind': 'kind', '#history': 'history' };
  addStory(
    current,
    [{ at: reopen.at.toISOString(), type: 'redrive', by: reopen.by ?? 'npm run redrive' }],
    storySet,
    storyValues,
    names,
  );
  // Only the attributes written come back (the operators' role may not have `record` returned): the record as
  // written is the one read, changed by them.
  const updated = await updatedRecord({
    TableName: recordsTable(),
    Key: { pk: { S: current.id } },
    UpdateExpression: [
      'SET #status = :accepted, statusKey = :statusKey, updatedAt = :at, openKind = :openKind, dueAt = :due,',
      'tries = :zero,',
      '#history = list_append(if_not_exists(#history, :empty), :step),',
      'pendingEvents = list_append(if_not_exists(pendingEvents, :empty), :event),',
      `eventSequence = :sequence, eventsKind = #kind, eventsDueAt = :eventsDue, ${storySet.join(', ')}`,
      'REMOVE leaseUntil, purgeKind, purgeAt, expiresAt, callFailures, callFailedAt, loneFailureChance',
    ].join(' '),
    ConditionExpression:
      '#status = :failed AND updatedAt = :seen AND attribute_not_exists(personalDataRemovedAt)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: {
      ...storyValues,
      ':accepted': { S: 'accepted' },
      ':failed': { S: 'failed' },
      ':statusKey': { S: statusKeyOf(current.kind, 'accepted') },
      // A test record waits apart from the live ones (lib/delivery/isolation.ts openPartitions).
      ':openKind': { S: openKindOf(current.kind, current.test) },
      ':at': { S: reopen.at.toISOString() },
      ':seen': { S: current.updatedAt },
      ':due': { S: reopen.dueAt },
      ':zero': { N: '0' },
      ':empty': { L: [] },
      ':step': listOf({
        at: reopen.at.toISOString(),
        status: 'accepted',
        reached: false,
        redriven: true,
      } satisfies HistoryEntry),
      ':event': listOf(event),
      ':sequence': { N: String(sequence) },
      ':eventsDue': { S: dueAfter(reopen.at, EVENTS_DUE_AFTER_SECONDS) },
    },
    ReturnValues: 'UPDATED_NEW',
  });
  if (!updated) return undefined;
  const { leaseUntil: _l, purgeKind: _k, purgeAt: _p, expiresAt: _x, ...kept } = current;
  return { ...kept, ...updated };
};

const updatedRecord = async (input: UpdateItemCommandInput): Promise<StatusRecord | undefined> => {
  try {
    const out = await dynamoClient().send(new UpdateItemCommand(input));
    return fromItem(out.Attributes ?? {});
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
};
