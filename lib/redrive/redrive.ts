import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { scanStatusRecords } from '../store/scanStatus.ts';
import { reopenFailedRecord } from '../store/statusUpdates.ts';
import type { QueuedRecord, RecordKind } from '../types.ts';

export interface RedriveQueues {
  sqs: SQSClient;
  kind: RecordKind;
  queueUrl: string;
  deadLetterQueueUrl: string;
}

/**
 * Moves every message of a dead-letter queue back to its queue by hand (receive, send, delete) and puts each
 * record back to `accepted`. For the local queue, which has no message move task. A message is deleted from the
 * dead-letter queue only after it is on the queue again, so an interruption duplicates rather than loses.
 *
 * @returns how many messages were moved.
 */
export const redriveByHand = async ({
  sqs,
  queueUrl,
  deadLetterQueueUrl,
}: RedriveQueues): Promise<number> => {
  let moved = 0;
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return moved;
    for (const message of messages) {
      const body = JSON.parse(message.Body ?? '{}') as Partial<QueuedRecord>;
      if (typeof body.id === 'string') await reopenFailedRecord(body.id);
    }
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), MessageBody: m.Body ?? '' })),
      }),
    );
    const sentIds = new Set((sent.Successful ?? []).map((s) => s.Id));
    const toDelete = messages.flatMap((m, i) =>
      sentIds.has(String(i)) ? [{ Id: String(i), ReceiptHandle: m.ReceiptHandle }] : [],
    );
    if (toDelete.length > 0)
      await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: deadLetterQueueUrl, Entries: toDelete }));
    moved += toDelete.length;
    if (toDelete.length < messages.length)
      throw new Error(`${messages.length - toDelete.length} message(s) could not be moved back`);
  }
};

/**
 * On AWS: puts every `failed` record of the kind back to `accepted`, then starts SQS's message move task from the
 * dead-letter queue to its queue. Records go first, so no message arrives for a record the worker would skip.
 *
 * @returns how many records were reopened and the move task's handle.
 */
export const redriveOnAws = async (
  sqs: SQSClient,
  kind: RecordKind,
  arns: { queueArn: string; deadLetterQueueArn: string },
): Promise<{ reopened: number; taskHandle?: string }> => {
  let reopened = 0;
  for await (const status of scanStatusRecords('failed', kind)) {
    if (await reopenFailedRecord(status.id)) reopened++;
  }
  const task = await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: arns.deadLetterQueueArn, DestinationArn: arns.queueArn }),
  );
  return { reopened, taskHandle: task.TaskHandle };
};
