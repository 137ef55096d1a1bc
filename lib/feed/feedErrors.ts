import { dynamoClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import type { HistoryEntry } from '../records/types.ts';
import { recordsTable } from '../settings/settings.ts';
import { conditionally } from '../store/table.ts';
import { feedPkOf } from './feedKey.ts';

/**
 * Writes a record's cleaned error texts into its feed entries (the purge's part, lib/retention/purge.ts): each
 * change of state is a step of the record's history with the same time, so its entry is found by key (`feed#<id>:<at>`,
 * no query). `history` is the record's history with its texts already cleaned. Only an entry that exists and has an
 * error is written (an expired or never-written one is not made up). Harmless to run again.
 *
 * @returns how many entries were written.
 * @example
 * await cleanFeedErrors(record.id, withoutPersonalValues(record).history ?? []);
 */
export const cleanFeedErrors = async (id: string, history: readonly HistoryEntry[]): Promise<number> => {
  // The steps that were changes of state (published as events): a settling, or a redrive.
  const changes = history.filter(
    (step) => (step.status !== 'accepted' || step.redriven) && step.error !== undefined,
  );
  let written = 0;
  // One after the other: a record has a few changes, and the purge already runs records in parallel.
  for (const step of changes) {
    if (
      await conditionally(
        dynamoClient().send(
          new UpdateItemCommand({
            TableName: recordsTable(),
            Key: { pk: { S: feedPkOf(`${id}:${step.at}`) } },
            UpdateExpression: 'SET feedEvent.#data.#error = :error',
            ConditionExpression: 'attribute_exists(feedEvent.#data.#error)',
            ExpressionAttributeNames: { '#data': 'data', '#error': 'error' },
            ExpressionAttributeValues: { ':error': { S: step.error as string } },
          }),
        ),
      )
    )
      written++;
  }
  return written;
};
