import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { publishAfterOutcome } from '../outbox/publish.ts';
import { messageGroupOfBody } from '../queue/messageGroup.ts';
import { queuedRecordOf, readQueuedRecord } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import type { StatusRecord } from '../records/types.ts';
import { queueUrlFor, reconcileSettings } from '../settings/settings.ts';
import { OPERATOR_ATTRIBUTES } from '../store/operatorAttributes.ts';
import { statusRecordsIn } from '../store/statusIndex.ts';
import { getStatusRecord, getStatusRecords } from '../store/statusRecords.ts';
import { reopenFailedRecord } from '../store/statusUpdates.ts';
import type { RecordKind } from '../types.ts';
import { RECORD_KINDS } from '../types.ts';

/** Reopened records are due for the reconciler this long after the redrive, unless their message comes back first. */
const reopenDue = (at: Date) => dueAfter(at, reconcileSettings().reconcileAfterSeconds);

/**
 * Reopens one `failed` record as read and publishes its `accepted` event (left in its outbox for the reconciler
 * if the bus cannot take it now).
 */
const reopen = async (status: StatusRecord, at: Date, by?: string): Promise<boolean> => {
  const written = await reopenFailedRecord(status, { at, dueAt: reopenDue(at), by });
  if (written) await publishAfterOutcome(written);
  return written !== undefined;
};

/**
 * Reopens each `failed` record given (every redrive's one rule: `npm run redrive` locally and on AWS, and the
 * console's): those whose personal data is gone are left failed (they could not be delivered) and named apart.
 */
const reopenFailed = async (
  failed: AsyncIterable<StatusRecord> | Iterable<StatusRecord>,
  at: Date,
  /** Who redrives, for the records' timelines (staff, never a customer); default `npm run redrive`. */
  by?: string,
): Promise<{ reopened: StatusRecord[]; personalDataRemoved: string[] }> => {
  const reopened: StatusRecord[] = [];
  const personalDataRemoved: string[] = [];
  for await (const status of failed) {
    if (status.personalDataRemovedAt) personalDataRemoved.push(status.id);
    else if (await reopen(status, at, by)) reopened.push(status);
  }
  return { reopened, personalDataRemoved };
};

export interface RedriveQueues {
  sqs: SQSClient;
  kind: RecordKind;
  queueUrl: string;
  deadLetterQueueUrl: string;
}

/**
 * Moves every message of a dead-letter queue back to its queue by hand (receive, send, delete) and puts each
 * record back to `accepted`; then reopens the `failed` records whose messages are gone (the local dead-letter queue
 * lives in memory and is empty after a restart) and queues them. For the local queue, which has no message move
 * task. A message is deleted from the dead-letter queue only after it is on the queue again, so an interruption
 * duplicates rather than loses; the worker's claim makes a duplicate harmless. Each message goes back with its
 * client's MessageGroupId, as the worker dead-lettered it, so the fair queue still serves quiet clients first.
 *
 * @returns how many messages were moved, how many records without a message were queued again, and (when any)
 * how many failed records could not be redriven because their personal data had been removed (lib/retention).
 */
export const redriveByHand = async (
  queues: RedriveQueues,
): Promise<{ moved: number; requeued: number; personalDataRemoved?: number }> => {
  const moved = await moveDeadLetters(queues);
  const { reopened, personalDataRemoved } = await reopenFailed(
    statusRecordsIn(queues.kind, 'failed'),
    new Date(),
  );
  // Should sending fail, the records are `accepted` and due: the reconciler queues them.
  const failed = await sendRecords(queues.queueUrl, reopened.map(queuedRecordOf));
  return {
    moved,
    requeued: reopened.length - failed.length,
    ...(personalDataRemoved.length > 0 ? { personalDataRemoved: personalDataRemoved.length } : {}),
  };
};

const moveDeadLetters = async ({ sqs, queueUrl, deadLetterQueueUrl }: RedriveQueues): Promise<number> => {
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
      const named = readQueuedRecord(message.Body ?? '');
      const at = new Date();
      const status = named ? await getStatusRecord(named.id) : undefined;
      if (status?.status === 'failed') await reopen(status, at);
    }
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        // Each keeps its client's group id (from the owner its body names, so a copy dead-lettered without one
        // gets it back): an ungrouped message is a tenant of its own, and 300 of them are served before a quiet
        // client's one.
        Entries: messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? '',
          ...messageGroupOfBody(m.Body ?? ''),
        })),
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
 * The task moves each message as it is, group id and all: the worker dead-letters with the client's group id
 * (lib/delivery/deadLetters.ts), so the redriven messages keep their fair share.
 * A record whose message is no longer in the dead-letter queue (kept 14 days) is queued by the reconciler once
 * it is due; one whose message does come back is claimed by the worker first, and the reconciler leaves it.
 *
 * @returns how many records were reopened, the move task's handle, and (when any) how many failed records could not
 * be redriven because their personal data had been removed (lib/retention).
 */
export const redriveOnAws = async (
  sqs: SQSClient,
  kind: RecordKind,
  arns: { queueArn: string; deadLetterQueueArn: string },
): Promise<{ reopened: number; taskHandle?: string; personalDataRemoved?: number }> => {
  const { reopened, personalDataRemoved } = await reopenFailed(statusRecordsIn(kind, 'failed'), new Date());
  const task = await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: arns.deadLetterQueueArn, DestinationArn: arns.queueArn }),
  );
  return {
    reopened: reopened.length,
    taskHandle: task.TaskHandle,
    ...(personalDataRemoved.length > 0 ? { personalDataRemoved: personalDataRemoved.length } : {}),
  };
};

/** What a redrive of chosen records did, by record id. */
export interface ChosenRedrive {
  /** Reopened (`accepted` again) and queued; their `accepted` events published. */
  redriven: string[];
  /** Not redriven: no such record, or not `failed` when read (already redriven, delivered, ...). */
  notFailed: string[];
  /** Left failed: their personal data was removed after the retention time, so they could not be delivered. */
  personalDataRemoved: string[];
  /** Reopened but not queued now (SQS refused): `accepted` and due, the reconciler queues them within minutes. */
  unqueued: string[];
}

/**
 * Redrives the chosen records (the console's "Redrive selected"): each one still `failed`, read without its
 * personal fields, is reopened exactly as `npm run redrive` reopens a kind's failed records ({@link reopenFailed}) and
 * queued on its kind's queue (as redriveByHand queues records whose messages are gone). Its dead-lettered message
 * stays where it is: should a later `npm run redrive` move it back, the worker's claim drops the second copy.
 *
 * @example
 * await redriveRecords(['3f0c…', '9a1b…']) // { redriven: ['3f0c…'], notFailed: ['9a1b…'], personalDataRemoved: [], unqueued: [] }
 */
export const redriveRecords = async (ids: readonly string[], by?: string): Promise<ChosenRedrive> => {
  const chosen = [...new Set(ids)];
  const read = await getStatusRecords(chosen, { consistent: true, attributes: OPERATOR_ATTRIBUTES });
  const failed = chosen.flatMap((id) => {
    const status = read.get(id);
    return status?.status === 'failed' ? [status] : [];
  });
  const { reopened, personalDataRemoved } = await reopenFailed(failed, new Date(), by);
  const unqueued: string[] = [];
  for (const kind of RECORD_KINDS) {
    const messages = reopened.filter((status) => status.kind === kind).map(queuedRecordOf);
    if (messages.length > 0) unqueued.push(...(await sendRecords(queueUrlFor(kind), messages)));
  }
  const redriven = reopened.map((status) => status.id);
  const settled = new Set([...redriven, ...personalDataRemoved]);
  return {
    redriven,
    notFailed: chosen.filter((id) => !settled.has(id)),
    personalDataRemoved,
    unqueued,
  };
};
