import { setTimeout as pause } from 'node:timers/promises';
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { sqsClient } from '../aws/clients.ts';
import { SendMessageBatchCommand } from '../aws/jsonProtocol/sqs.ts';
import { TRACEPARENT } from '../observability/traceContext.ts';
import type { QueuedRecord } from '../types.ts';
import { messageGroupOf } from './messageGroup.ts';

/** SQS takes at most 10 entries a call. */
const ENTRIES_PER_BATCH = 10;
/** Batches in flight at once for a large request. */
const PARALLEL_BATCHES = 10;
/** Rounds of re-sending the entries SQS refused (the SDK itself retries whole calls that fail). */
const ENTRY_RETRY_ROUNDS = 3;

/**
 * The message body (the trace context apart: it is a message attribute, {@link traceAttributes}): JSON with characters beyond the Basic Multilingual Plane (emoji) written as \u escapes.
 * SQS accepts them, but not every SQS-compatible server does (fauxqs refuses them); JSON.parse reads both alike.
 */
export const messageBody = ({ traceparent: _, ...message }: QueuedRecord): string =>
  JSON.stringify(message).replace(/[\u{10000}-\u{10FFFF}]/gu, (c) =>
    [...c.split('')].map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  );

/**
 * The record's trace context as the message attribute `traceparent` (contract section 8: propagated through SQS), so
 * that the worker's spans join the record's trace without reading it from the body.
 */
export const traceAttributes = (
  message: QueuedRecord,
): Pick<SendMessageBatchRequestEntry, 'MessageAttributes'> =>
  message.traceparent
    ? { MessageAttributes: { [TRACEPARENT]: { DataType: 'String', StringValue: message.traceparent } } }
    : {};

const sendBatch = async (
  queueUrl: string,
  batch: QueuedRecord[],
  options: { abortSignal?: AbortSignal },
): Promise<string[]> => {
  let pending: SendMessageBatchRequestEntry[] = batch.map((message, index) => ({
    Id: String(index),
    MessageBody: messageBody(message),
    ...traceAttributes(message),
    ...messageGroupOf(message.owner),
  }));
  for (let round = 0; round <= ENTRY_RETRY_ROUNDS && pending.length > 0; round++) {
    if (round > 0) await pause(50 * 2 ** round);
    if (options.abortSignal?.aborted) break;
    try {
      const out = await sqsClient().send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: pending }),
        options,
      );
      const failed = new Set((out.Failed ?? []).map((entry) => entry.Id));
      pending = pending.filter((entry) => failed.has(entry.Id));
    } catch {
      // The SDK has already retried this call; what it carried may or may not be queued. The caller treats
      // it as not queued: ids are stable, so a second copy is harmless to the worker.
      break;
    }
  }
  return pending.map((entry) => batch[Number(entry.Id)].id);
};

/**
 * Queues records, 10 to a call, re-sending entries SQS refuses; each message's group id is its record's owner.
 * With `abortSignal`, it stops when the signal aborts and reports what it had not sent by then.
 *
 * @returns the ids of the records that could not be queued (empty when all were).
 * @example
 * const failedIds = await sendRecords(queueUrl, [{ id, kind: 'caseRecord', requestId, record }]);
 */
export const sendRecords = async (
  queueUrl: string,
  messages: QueuedRecord[],
  options: { abortSignal?: AbortSignal } = {},
): Promise<string[]> => {
  const batches: QueuedRecord[][] = [];
  for (let i = 0; i < messages.length; i += ENTRIES_PER_BATCH)
    batches.push(messages.slice(i, i + ENTRIES_PER_BATCH));
  const failed: string[] = [];
  for (let i = 0; i < batches.length; i += PARALLEL_BATCHES) {
    const results = await Promise.all(
      batches.slice(i, i + PARALLEL_BATCHES).map((b) => sendBatch(queueUrl, b, options)),
    );
    for (const ids of results) failed.push(...ids);
  }
  return failed;
};
