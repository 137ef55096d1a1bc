import { dynamoClient } from '../aws/clients.ts';
import { ConditionalCheckFailedException, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../config.ts';
import { fromItem, getStatusRecord } from './statusRecords.ts';
import { conditionally } from './table.ts';
import type { RecordStatus, StatusRecord } from './types.ts';

type Value = { S: string } | { N: string };

/** What claiming a record for delivery found. */
export type ClaimResult =
  | { claimed: StatusRecord }
  /** Not claimed: the record as it is (settled, or leased by another worker), or undefined when it does not exist. */
  | { claimed?: undefined; current: StatusRecord | undefined };

/**
 * Claims an `accepted` record for one delivery: a conditional write that succeeds only when no other worker holds
 * an unexpired lease, so two copies of a message never reach the downstream together. The claim also moves
 * `dueAt` past the lease, so the reconciler leaves the record alone while it is being worked on.
 *
 * @example
 * const claim = await claimRecord(id, { now, leaseUntil, dueAt });
 * if (claim.claimed) deliver(claim.claimed);
 */
export const claimRecord = async (
  id: string,
  claim: { now: Date; leaseUntil: string; dueAt: string },
): Promise<ClaimResult> => {
  try {
    const out = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'SET leaseUntil = :lease, dueAt = :due',
        ConditionExpression:
          '#status = :accepted AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':lease': { S: claim.leaseUntil },
          ':due': { S: claim.dueAt },
          ':now': { S: claim.now.toISOString() },
          ':accepted': { S: 'accepted' },
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
}

/**
 * Records the outcome of one delivery attempt in one write and releases the claim. Only the worker whose lease
 * (`leaseUntil`) is still on the record moves it; a settled record leaves the `open` index.
 *
 * @returns false when the lease was no longer ours (nothing changed).
 * @example
 * await recordAttempt(id, { status: 'delivered', attempts: 1, downstreamId: '4900000017', at: new Date() }, lease);
 */
export const recordAttempt = async (
  id: string,
  outcome: AttemptOutcome,
  leaseUntil: string,
): Promise<boolean> => {
  const set = [
    '#status = :status',
    'attempts = if_not_exists(attempts, :zero) + :attempts',
    'updatedAt = :at',
  ];
  const remove = ['leaseUntil'];
  const values: Record<string, Value> = {
    ':status': { S: outcome.status },
    ':attempts': { N: String(outcome.attempts) },
    ':zero': { N: '0' },
    ':at': { S: outcome.at.toISOString() },
    ':accepted': { S: 'accepted' },
    ':lease': { S: leaseUntil },
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
  if (outcome.status === 'accepted' && outcome.dueAt) {
    set.push('dueAt = :due');
    values[':due'] = { S: outcome.dueAt };
  } else if (outcome.status !== 'accepted') {
    remove.push('openKind', 'dueAt');
  }
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
        ConditionExpression: '#status = :accepted AND leaseUntil = :lease',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * Puts a `failed` record back to `accepted` (redrive), in the `open` index with `dueAt`: if no message of it comes
 * back (it expired from the dead-letter queue), the reconciler queues it then. Attempts and the last error stay as
 * history.
 *
 * @returns false when the record was not `failed`.
 * @example
 * await reopenFailedRecord(id, { at: new Date(), dueAt });
 */
export const reopenFailedRecord = async (
  id: string,
  reopen: { at: Date; dueAt: string },
): Promise<boolean> => {
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression:
          'SET #status = :accepted, updatedAt = :at, openKind = #kind, dueAt = :due REMOVE leaseUntil',
        ConditionExpression: '#status = :failed',
        ExpressionAttributeNames: { '#status': 'status', '#kind': 'kind' },
        ExpressionAttributeValues: {
          ':accepted': { S: 'accepted' },
          ':failed': { S: 'failed' },
          ':at': { S: reopen.at.toISOString() },
          ':due': { S: reopen.dueAt },
        },
      }),
    ),
  );
};
