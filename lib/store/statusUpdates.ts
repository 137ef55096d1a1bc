import { ConditionalCheckFailedException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { recordsTable } from '../config.ts';
import type { RecordStatus } from './types.ts';

export interface AttemptOutcome {
  /** `accepted` for a transient failure that will be retried. */
  status: RecordStatus;
  /** 1 when the delivery request reached the downstream system, else 0. */
  attempts: 0 | 1;
  downstreamId?: string;
  error?: string;
  at: Date;
}

/**
 * Records the outcome of one delivery attempt in one write. Only a record that is still `accepted` moves:
 * when a second copy of a message already settled it, nothing changes and this returns false.
 *
 * @example
 * await recordAttempt(id, { status: 'delivered', attempts: 1, downstreamId: '4900000017', at: new Date() });
 */
export const recordAttempt = async (id: string, outcome: AttemptOutcome): Promise<boolean> => {
  const set = [
    '#status = :status',
    'attempts = if_not_exists(attempts, :zero) + :attempts',
    'updatedAt = :at',
  ];
  const remove: string[] = [];
  const values: Record<string, { S: string } | { N: string }> = {
    ':status': { S: outcome.status },
    ':attempts': { N: String(outcome.attempts) },
    ':zero': { N: '0' },
    ':at': { S: outcome.at.toISOString() },
    ':accepted': { S: 'accepted' },
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
  try {
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(pk) AND #status = :accepted',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

/**
 * Puts a `failed` record back to `accepted` (redrive). Attempts and the last error stay as history.
 * @returns false when the record was not `failed`.
 */
export const reopenFailedRecord = async (id: string, at = new Date()): Promise<boolean> => {
  try {
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'SET #status = :accepted, updatedAt = :at',
        ConditionExpression: '#status = :failed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':accepted': { S: 'accepted' },
          ':failed': { S: 'failed' },
          ':at': { S: at.toISOString() },
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};
