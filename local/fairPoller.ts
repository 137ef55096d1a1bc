/**
 * SQS fair queues for the local runner. On AWS, a standard queue whose messages carry a MessageGroupId (here the
 * record's client) serves a tenant holding more than its share after the others; fauxqs serves first in, first out
 * and keeps no group id on a standard queue. So the local poller looks ahead instead: it receives up to `lookahead`
 * messages (everything queued, for any backlog this machine holds), keeps them by client (local/fairBuffer.ts)
 * and fills each batch round-robin across the clients waiting; a quiet client's record goes in the next batch
 * whatever another client has queued ahead of it. Up to `maximumConcurrency` batches are in flight at once, as
 * Lambda's event source runs them (local/batchSlots.ts), so a quiet client's record need not wait for a
 * flood's batch to end before its own batch starts.
 *
 * Nothing is lost or doubled by looking ahead: a held message stays invisible (its visibility is extended before
 * half of it has passed), a message received again is held once (by message id, with its newest receipt handle),
 * a message received again while its batch is in flight is not held (it is never in two batches at once), and a
 * stop waits for the batches in flight, then hands every held message back to the queue (visibility 0). The
 * worker's lease still guards delivery.
 */
import { ChangeMessageVisibilityBatchCommand, type Message } from '@aws-sdk/client-sqs';
import { batchSlots } from './batchSlots.ts';
import { FairBuffer } from './fairBuffer.ts';
import {
  GATE_STEP_MS,
  GATHER_PAUSE_MS,
  invokeBatch,
  type PollOptions,
  queueAttributes,
  type ReceiveGate,
  receiveMessages,
  SQS_RECEIVE_MAX,
  systemClock,
} from './sqsBatch.ts';

export interface FairPollOptions extends PollOptions {
  /** Messages held ahead at most (memory bounds it). Default 100,000. */
  lookahead?: number;
}

/** Messages held ahead by default: the largest flood the bench offers (`npm run bench -- fair --fair-records 100000`). */
export const DEFAULT_LOOKAHEAD = 100_000;

/**
 * Receives in flight at once while catching up with a backlog. fauxqs serves first in, first out, so a quiet
 * client's record queued behind a backlog is seen only once the lanes have read through it: measured with 10,000
 * queued before the poller started, that took about 6 s with 4 lanes, 4 s with 12, 3 s with 32 (`npm run bench --
 * fair`); 16 is most of the gain.
 */
const RECEIVE_LANES = 16;

/** How often the held messages' visibility is looked at. */
const UPKEEP_EVERY_MS = 1000;

/**
 * Polls a queue fairly until stopped. Lanes receive ahead into the buffer (long polls while idle; several receives
 * at once while there is a backlog), up to `lookahead` messages; one loop hands the worker a batch as Lambda's
 * event source would: when `batchSize` are held, or the batching window has passed since the oldest held one
 * arrived, and fewer than `maximumConcurrency` batches are in flight. Each batch is filled round-robin across
 * clients, after asking the `gate` (a held downstream: one batch per probe period, alone in flight; the messages
 * held meanwhile stay held).
 *
 * @example
 * const poller = startFairPoller({ sqs, queueUrl, handler, batchSize: 200, batchingWindowSeconds: 1, maximumConcurrency: 2 });
 * await poller.stop(); // the batches in flight end; what it held goes back to the queue
 */
export const startFairPoller = (
  options: FairPollOptions & { onError?: (error: unknown) => void; gate?: ReceiveGate },
) => {
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? SQS_RECEIVE_MAX;
  const lookahead = Math.max(batchSize, options.lookahead ?? DEFAULT_LOOKAHEAD);
  const waitSeconds = options.waitSeconds ?? 0;
  const buffer = new FairBuffer();
  /** When each held message's visibility ends, by message id. */
  const hiddenUntil = new Map<string, number>();
  /** Ids of the messages in the batches in flight. */
  const inFlightIds = new Set<string>();
  let lastUpkeep = Number.NEGATIVE_INFINITY;
  let stopped = false;
  const slots = batchSlots({
    maximumConcurrency: options.maximumConcurrency,
    gate: options.gate,
    onError: (error) => options.onError?.(error),
  });

  const visibilityMs = async () =>
    (options.visibilityTimeout ?? (await queueAttributes(options.sqs, options.queueUrl)).visibilitySeconds) *
    1000;

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

  const guarded = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      if (stopped) return;
      options.onError?.(error);
      await clock.sleep(1000);
    }
  };

  /** Whether the last receive came back full: a backlog to catch up with, so every lane receives. */
  let backlog = false;
  /**
   * One lane of receiving ahead. Lane 0 long-polls while nothing is held; the others receive only while lane 0
   * finds a backlog, so catching up with a flood takes a fraction of the time (receives wait on the queue, not
   * on this process) and a quiet client's record behind it is seen sooner.
   */
  const receiveAhead = async (lane: number) => {
    while (!stopped)
      await guarded(async () => {
        if (buffer.size >= lookahead || (lane > 0 && !backlog)) {
          await clock.sleep(GATHER_PAUSE_MS);
          return;
        }
        const visibility = await visibilityMs();
        // Long-poll only while nothing is held: with messages held, a batch may be due any moment.
        const wait = buffer.size === 0 && lane === 0 ? waitSeconds : 0;
        const received = await receiveMessages(options, lookahead - buffer.size, wait);
        backlog = received.length === SQS_RECEIVE_MAX;
        // A copy of a message whose batch is still in flight (its visibility ended meanwhile) is left to the queue.
        const messages = received.filter((message) => !inFlightIds.has(message.MessageId ?? ''));
        if (received.length === 0) {
          if (wait === 0) await clock.sleep(GATHER_PAUSE_MS);
          return;
        }
        if (messages.length === 0) return;
        const now = clock.now();
        buffer.add(messages, now);
        for (const message of messages) hiddenUntil.set(message.MessageId ?? '', now + visibility);
      });
  };

  const handOut = async () => {
    while (!stopped)
      await guarded(async () => {
        if (!slots.free()) {
          // Held messages stay hidden however long the batches in flight take.
          await upkeep();
          await Promise.race([slots.oneEnded(), clock.sleep(UPKEEP_EVERY_MS)]);
          return;
        }
        const oldest = buffer.oldestReceivedAt();
        if (oldest === undefined) {
          await clock.sleep(GATHER_PAUSE_MS);
          return;
        }
        // The window runs from the oldest message held, as Lambda's runs from the first it receives.
        const windowEnds = oldest + (options.batchingWindowSeconds ?? 0) * 1000;
        if (buffer.size < batchSize && clock.now() < windowEnds) {
          await clock.sleep(Math.min(GATHER_PAUSE_MS, windowEnds - clock.now()));
          return;
        }
        const waitMs = await slots.admit();
        await upkeep();
        if (waitMs > 0) {
          await clock.sleep(Math.min(waitMs, GATE_STEP_MS));
          return;
        }
        const batch = buffer.takeBatch(batchSize);
        if (batch.length === 0) return;
        const ids = batch.map((message) => message.MessageId ?? '');
        for (const id of ids) {
          hiddenUntil.delete(id);
          inFlightIds.add(id);
        }
        slots.start(async () => {
          try {
            await invokeBatch(options, batch);
          } finally {
            for (const id of ids) inFlightIds.delete(id);
          }
        });
      });
  };

  const lanes = Array.from({ length: RECEIVE_LANES }, (_, lane) => receiveAhead(lane));
  const loops = Promise.all([...lanes, handOut()]);
  return {
    stop: async () => {
      stopped = true;
      await loops;
      await slots.drained();
      // Messages held ahead go back to the queue now rather than when their visibility ends.
      const all = buffer.takeAll();
      hiddenUntil.clear();
      await changeVisibility(all, 0).catch((error: unknown) => options.onError?.(error));
    },
    /** Messages received and held ahead, not yet handed to the worker. */
    held: () => buffer.size,
    /** Batches handed to the worker and not yet ended. */
    inFlight: () => slots.inFlight(),
  };
};
