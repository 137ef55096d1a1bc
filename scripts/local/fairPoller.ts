/**
 * SQS fair queues for the local runner. On AWS, a standard queue whose messages carry a MessageGroupId (here the
 * record's client) serves a tenant holding more than its share after the others; fauxqs serves first in, first out
 * and keeps no group id on a standard queue. So the local poller looks ahead instead: it receives up to `lookahead`
 * messages (everything queued, for any backlog this machine holds), keeps them by client (scripts/local/fairBuffer.ts)
 * and fills each batch round-robin across the clients waiting; a quiet client's record goes in the next batch
 * whatever another client has queued ahead of it.
 *
 * Nothing is lost or doubled by looking ahead: a held message stays invisible (its visibility is extended before
 * half of it has passed), a message received again is held once (by message id, with its newest receipt handle),
 * and a stop hands every held message back to the queue (visibility 0). The worker's lease still guards delivery.
 */
import { ChangeMessageVisibilityBatchCommand, type Message } from '@aws-sdk/client-sqs';
import { FairBuffer } from './fairBuffer.ts';
import {
  GATHER_PAUSE_MS,
  invokeBatch,
  type PollOptions,
  queueAttributes,
  receiveMessages,
  SQS_RECEIVE_MAX,
  systemClock,
} from './sqsBatch.ts';

export interface FairPollOptions extends PollOptions {
  /** Messages held ahead at most (memory bounds it; each is a few hundred bytes). Default 100,000. */
  lookahead?: number;
}

/** Messages held ahead by default: more than the largest backlog measured here (bench/RESULTS.md). */
export const DEFAULT_LOOKAHEAD = 100_000;

/**
 * One top-up receives for at most this long before a batch goes out, so a flood still arriving never starves the
 * worker; the next top-up goes on where it stopped.
 */
const TOP_UP_MS = 250;

/** How often the held messages' visibility is looked at. */
const UPKEEP_EVERY_MS = 1000;

/**
 * A fair poll of one queue: `step()` tops the look-ahead up, gathers within the batching window as Lambda does,
 * and invokes the handler once with a batch filled round-robin across clients; `upkeep()` keeps held messages
 * invisible; `release()` hands them back to the queue.
 *
 * @example
 * const poll = startFairPoll({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1 });
 * await poll.step(); // { received: 200, deleted: 200, failed: 0 }
 * await poll.release();
 */
export const startFairPoll = (options: FairPollOptions) => {
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? SQS_RECEIVE_MAX;
  const lookahead = Math.max(batchSize, options.lookahead ?? DEFAULT_LOOKAHEAD);
  const buffer = new FairBuffer();
  /** When each held message's visibility ends, by message id. */
  const hiddenUntil = new Map<string, number>();
  let lastUpkeep = 0;

  const visibilityMs = async () =>
    (options.visibilityTimeout ?? (await queueAttributes(options.sqs, options.queueUrl)).visibilitySeconds) *
    1000;

  const topUp = async (waitSeconds: number) => {
    const started = clock.now();
    const visibility = await visibilityMs();
    let wait = waitSeconds;
    while (buffer.size < lookahead) {
      const messages = await receiveMessages(options, lookahead - buffer.size, wait);
      wait = 0;
      if (messages.length === 0) return;
      const now = clock.now();
      buffer.add(messages, now);
      for (const message of messages) hiddenUntil.set(message.MessageId ?? '', now + visibility);
      if (clock.now() - started >= TOP_UP_MS) return;
    }
  };

  const changeVisibility = async (messages: Message[], seconds: number) => {
    const refused: string[] = [];
    for (let start = 0; start < messages.length; start += SQS_RECEIVE_MAX) {
      const chunk = messages.slice(start, start + SQS_RECEIVE_MAX);
      const out = await options.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: seconds,
          })),
        }),
      );
      for (const failed of out.Failed ?? []) refused.push(chunk[Number(failed.Id)].MessageId ?? '');
    }
    return refused;
  };

  /** Extends the visibility of held messages past half of it, so none reappears while held. */
  const upkeep = async () => {
    const now = clock.now();
    if (now - lastUpkeep < UPKEEP_EVERY_MS) return;
    lastUpkeep = now;
    const visibility = await visibilityMs();
    const due = buffer
      .held()
      .filter((message) => (hiddenUntil.get(message.MessageId ?? '') ?? 0) - now < visibility / 2);
    if (due.length === 0) return;
    const refused = new Set(await changeVisibility(due, visibility / 1000));
    for (const message of due) {
      const id = message.MessageId ?? '';
      // A message whose visibility could not be extended is the queue's again: a later receive brings it back.
      if (refused.has(id)) {
        buffer.drop(id);
        hiddenUntil.delete(id);
      } else hiddenUntil.set(id, now + visibility);
    }
  };

  const step = async () => {
    await topUp(buffer.size === 0 ? (options.waitSeconds ?? 0) : 0);
    if (buffer.size === 0) return { received: 0, deleted: 0, failed: 0 };
    // The window runs from the first message held, as Lambda's runs from the first it receives.
    const windowEnds =
      (buffer.oldestReceivedAt() ?? clock.now()) + (options.batchingWindowSeconds ?? 0) * 1000;
    while (buffer.size < batchSize && clock.now() < windowEnds) {
      await clock.sleep(Math.min(GATHER_PAUSE_MS, windowEnds - clock.now()));
      await topUp(0);
    }
    await upkeep();
    const batch = buffer.takeBatch(batchSize);
    for (const message of batch) hiddenUntil.delete(message.MessageId ?? '');
    return invokeBatch(options, batch);
  };

  return {
    step,
    upkeep,
    /** Messages held ahead now. */
    held: () => buffer.size,
    /** Hands every held message back to the queue (visible at once). */
    release: async () => {
      const all = buffer.takeAll();
      hiddenUntil.clear();
      await changeVisibility(all, 0);
    },
  };
};
