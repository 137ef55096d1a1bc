/**
 * Chosen fauxqs queues kept on disk, the others in memory. fauxqs 2.4 persists all or nothing (`dataDir`); npm
 * start keeps its delivery queues in memory (their records are queued again from the store at every start) but the
 * webhook queue holds events nothing else keeps, as SQS does on AWS: `keepQueuesOnDisk` gives exactly those queues
 * fauxqs's own SQLite persistence. It also corrects fauxqs's `updateMessageReady`, which writes NULL into the
 * NOT NULL receive count when a message's visibility ends (the write fails, and the count would be lost): here the
 * message's receipt and deadline are cleared and its receive count kept, as SQS keeps it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PersistenceManager } from '../../../node_modules/fauxqs/dist/persistence.js';
import type { SqsQueue, SqsStore } from '../../../node_modules/fauxqs/dist/sqs/sqsStore.js';
import type { SqsMessage } from '../../../node_modules/fauxqs/dist/sqs/sqsTypes.js';

/** What of PersistenceManager this uses, public in its JavaScript (`loadSqsMessages` and `db` are private in its types). */
interface Persistence {
  loadSqsMessages(queue: SqsQueue): void;
  insertQueue(queue: SqsQueue): void;
  insertMessage(queueName: string, message: SqsMessage): void;
  updateMessageInflight(
    messageId: string,
    receiptHandle: string,
    visibilityDeadline: number,
    receiveCount: number,
    firstReceiveTimestamp: number | undefined,
  ): void;
  updateMessageReady(messageId: string): void;
  close(): void;
  db: { prepare(sql: string): { run(...values: unknown[]): unknown } };
}

const fauxqsChanged = (what: string) =>
  `fauxqs changed: ${what} is not as local/emulators/fauxqs/durableQueues.ts expects (written for fauxqs 2.4.1)`;

/**
 * Loads what an earlier run left of each named queue (created already, still empty) from `<dir>/fauxqs.db`, and
 * keeps every later change of them there. Returns what closes the database.
 *
 * @example
 * const close = keepQueuesOnDisk(sqsStore, ['dealer-gateway-local-webhooks'], '.data/sqs');
 */
export const keepQueuesOnDisk = (store: SqsStore, names: readonly string[], dir: string): (() => void) => {
  const persistence = new PersistenceManager(dir) as unknown as Persistence;
  if (typeof persistence.loadSqsMessages !== 'function' || typeof persistence.db?.prepare !== 'function')
    throw new Error(fauxqsChanged('PersistenceManager'));
  const ready = persistence.db.prepare(
    'UPDATE sqs_messages SET receipt_handle = NULL, visibility_deadline = NULL WHERE message_id = ?',
  );
  // fauxqs's own, but for the ready update (see above).
  const corrected: Persistence = Object.assign(Object.create(persistence) as Persistence, {
    updateMessageReady: (messageId: string) => void ready.run(messageId),
  });
  for (const name of names) {
    const queue = store.getQueueByName(name);
    if (!queue) throw new Error(`keepQueuesOnDisk: no queue ${name}`);
    persistence.loadSqsMessages(queue);
    // The queue's row names this run's URL; replacing it drops its messages' rows (a foreign key), written again.
    persistence.insertQueue(queue);
    for (const message of [...queue.messages, ...queue.delayedMessages])
      persistence.insertMessage(queue.name, message);
    for (const entry of queue.inflightMessages.values()) {
      persistence.insertMessage(queue.name, entry.message);
      persistence.updateMessageInflight(
        entry.message.messageId,
        entry.receiptHandle,
        entry.visibilityDeadline,
        entry.message.approximateReceiveCount,
        entry.message.approximateFirstReceiveTimestamp,
      );
    }
    queue.persistence = corrected as unknown as SqsQueue['persistence'];
  }
  return () => persistence.close();
};

/** A message kept on disk, as another process (npm run soak) reads it. */
export interface MessageOnDisk {
  queue: string;
  body: string;
  receiveCount: number;
}

/**
 * Every message `keepQueuesOnDisk` keeps in `dir`, read without changing anything (a running npm start may hold
 * the database); empty when there is none.
 *
 * @example
 * const messages = readQueuesOnDisk('.data/sqs'); // [{ queue: 'dealer-gateway-local-webhooks', body, receiveCount: 3 }]
 */
export const readQueuesOnDisk = (dir: string): MessageOnDisk[] => {
  const file = join(dir, 'fauxqs.db');
  if (!existsSync(file)) return [];
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return (
      db
        .prepare(
          'SELECT queue_name, body, approximate_receive_count FROM sqs_messages ORDER BY sent_timestamp',
        )
        .all() as { queue_name: string; body: string; approximate_receive_count: number }[]
    ).map((row) => ({ queue: row.queue_name, body: row.body, receiveCount: row.approximate_receive_count }));
  } finally {
    db.close();
  }
};
