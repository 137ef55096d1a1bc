/**
 * Chosen fauxqs queues kept on disk (local/emulators/fauxqs/durableQueues.ts): a message, its receive count and
 * its first receive survive a restart of the local queue; without the patch's correction fauxqs's own persistence
 * fails the moment a message's visibility ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { readQueuesOnDisk } from '../../local/emulators/fauxqs/durableQueues.ts';
import { startLocalQueue } from '../../local/localQueue.ts';
import { PersistenceManager } from '../../node_modules/fauxqs/dist/persistence.js';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A local queue server with queue `kept` on disk in `dir` and `memory` not. */
const start = async (dir: string) => {
  const server = await startLocalQueue();
  const sqs = new SQSClient({ ...localClientConfig(server.endpoint), useQueueUrlAsEndpoint: false });
  const urlOf = async (name: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '30' } })))
      .QueueUrl as string;
  const kept = await urlOf('kept');
  const memory = await urlOf('memory');
  server.keepOnDisk(['kept'], dir);
  return {
    sqs,
    kept,
    memory,
    stop: async () => {
      sqs.destroy();
      await server.close();
    },
  };
};

const receive = (sqs: SQSClient, url: string) =>
  sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      MessageSystemAttributeNames: ['All'],
    }),
  );

describe('fauxqs queues kept on disk', () => {
  it('keep a chosen queue’s messages, receive counts included, across a restart; the others in memory only', async () => {
    // Prepare: one message on each queue; the kept one received once and made visible again (a retry's path).
    const dir = await mkdtemp(join(tmpdir(), 'durable-queues-'));
    dirs.push(dir);
    const first = await start(dir);
    await first.sqs.send(new SendMessageCommand({ QueueUrl: first.kept, MessageBody: 'kept' }));
    await first.sqs.send(new SendMessageCommand({ QueueUrl: first.memory, MessageBody: 'lost' }));
    const [received] = (await receive(first.sqs, first.kept)).Messages ?? [];
    await first.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: first.kept,
        ReceiptHandle: received.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    await receive(first.sqs, first.memory);
    // Act: stop, start again on the same directory.
    await first.stop();
    const onDisk = readQueuesOnDisk(dir);
    const second = await start(dir);
    const again = (await receive(second.sqs, second.kept)).Messages ?? [];
    const memory = (await receive(second.sqs, second.memory)).Messages ?? [];
    await second.stop();
    // Assess
    expect(onDisk).toEqual([{ queue: 'kept', body: 'kept', receiveCount: 1 }]);
    expect(again.map((message) => [message.Body, message.Attributes?.ApproximateReceiveCount])).toEqual([
      ['kept', '2'],
    ]);
    expect(memory).toEqual([]);
  });

  it('(control) fauxqs’s own persistence fails when a received message becomes visible again', async () => {
    // Prepare: fauxqs 2.4.1's PersistenceManager as it is, a message received once.
    const dir = await mkdtemp(join(tmpdir(), 'durable-queues-'));
    dirs.push(dir);
    const persistence = new PersistenceManager(dir);
    persistence.insertQueue({
      name: 'q',
      url: 'u',
      arn: 'a',
      attributes: {},
      tags: new Map(),
      createdTimestamp: 1,
      lastModifiedTimestamp: 1,
      sequenceCounter: 0,
    } as never);
    persistence.insertMessage('q', {
      messageId: 'm',
      body: 'b',
      md5OfBody: 'x',
      messageAttributes: {},
      md5OfMessageAttributes: '',
      sentTimestamp: 1,
      approximateReceiveCount: 0,
    } as never);
    persistence.updateMessageInflight('m', 'r', Date.now() + 1000, 1, 5);
    // Act / Assess: it writes NULL into the NOT NULL receive count (what durableQueues.ts corrects).
    expect(() => persistence.updateMessageReady('m')).toThrow(
      'NOT NULL constraint failed: sqs_messages.approximate_receive_count',
    );
    persistence.close();
  });
});
