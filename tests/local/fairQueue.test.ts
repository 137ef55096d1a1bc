/**
 * The local queue's standard queues are fair queues, as on AWS (local/emulators/fauxqs/fairQueue.ts inside fauxqs), spoken to over
 * HTTP with the AWS SDK: a message keeps the MessageGroupId its send named, a receive serves a quiet client's
 * message before a backlog whose client holds its share in flight, messages without a group id come first in, first
 * out, and the queue's own guarantees stay: nothing lost or doubled through visibility, deletion, a purge and the
 * dead-letter queue.
 */
import { randomBytes } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localClientConfig } from '../../local/aws.ts';
import { makeQueueFair } from '../../local/emulators/fauxqs/fairQueue.ts';
import { SqsQueue } from '../../node_modules/fauxqs/dist/sqs/sqsStore.js';

let sqs: SQSClient;

beforeAll(() => {
  sqs = new SQSClient({ ...localClientConfig(inject('sqsEndpoint')), useQueueUrlAsEndpoint: false });
});
afterAll(() => sqs.destroy());

/** A queue of this test's own (a standard queue unless `attributes` say otherwise). */
const newQueue = async (attributes: Record<string, string> = {}, suffix = '') => {
  const out = await sqs.send(
    new CreateQueueCommand({
      QueueName: `fair-${randomBytes(4).toString('hex')}${suffix}`,
      Attributes: { VisibilityTimeout: '60', ...attributes },
    }),
  );
  return out.QueueUrl as string;
};

/** Sends `count` messages `<prefix>-<n>`, with `group` as their MessageGroupId (none when undefined). */
const send = async (queueUrl: string, prefix: string, count: number, group?: string) => {
  for (let start = 0; start < count; start += 10)
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
          Id: String(i),
          MessageBody: `${prefix}-${start + i}`,
          ...(group === undefined ? {} : { MessageGroupId: group }),
        })),
      }),
    );
};

/** Receives up to `count` messages (10 a call), leaving them in flight. */
const receive = async (queueUrl: string, count: number): Promise<Message[]> => {
  const got: Message[] = [];
  while (got.length < count) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, count - got.length),
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (!out.Messages?.length) break;
    got.push(...out.Messages);
  }
  return got;
};

const bodies = (messages: Message[]) => messages.map((m) => m.Body);

const remove = async (queueUrl: string, messages: Message[]) => {
  for (let start = 0; start < messages.length; start += 10)
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages
          .slice(start, start + 10)
          .map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
};

describe('the group id a send names', () => {
  it('is kept and reported by a receive: single and batched sends, equal bodies, an entry refused', async () => {
    // Prepare: a single send with a group; a batch whose two entries share a body but not a group; one with none.
    const queueUrl = await newQueue();
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'one', MessageGroupId: 'dealer-1' }),
    );
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'a', MessageBody: 'same', MessageGroupId: 'dealer-2' },
          { Id: 'b', MessageBody: 'same', MessageGroupId: 'dealer-3' },
          { Id: 'c', MessageBody: 'none' },
        ],
      }),
    );
    // A batch whose first entry fauxqs refuses (a character SQS does not take): the second keeps its own group.
    const refused = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'bad', MessageBody: 'bad\u0000', MessageGroupId: 'dealer-4' },
          { Id: 'ok', MessageBody: 'after', MessageGroupId: 'dealer-5' },
        ],
      }),
    );
    // Act
    const got = await receive(queueUrl, 5);
    // Assess
    expect(got.map((m) => [m.Body, m.Attributes?.MessageGroupId])).toEqual([
      ['one', 'dealer-1'],
      ['same', 'dealer-2'],
      ['same', 'dealer-3'],
      ['none', undefined],
      ['after', 'dealer-5'],
    ]);
    expect(refused.Failed?.map((entry) => entry.Id)).toEqual(['bad']);
  });
});

describe('a receive beside a backlog', () => {
  it("serves a quiet client's message first once the flooding client holds 30 in flight", async () => {
    // Prepare: client A's 200 queued, then client B's one.
    const queueUrl = await newQueue();
    await send(queueUrl, 'a', 200, 'client-a');
    await send(queueUrl, 'b', 1, 'client-b');
    // Act: 30 of A's received (A not yet noisy: oldest first), then one more receive.
    const first = await receive(queueUrl, 30);
    const next = await receive(queueUrl, 10);
    // Assess: B's message heads the next receive, then A's in order.
    expect(bodies(first)).toEqual(Array.from({ length: 30 }, (_, i) => `a-${i}`));
    expect(bodies(next)).toEqual(['b-0', ...Array.from({ length: 9 }, (_, i) => `a-${30 + i}`)]);
  });

  it('without group ids serves first in, first out (the control: the same backlog, no clients named)', async () => {
    const queueUrl = await newQueue();
    await send(queueUrl, 'a', 200);
    await send(queueUrl, 'b', 1);
    await receive(queueUrl, 30);
    const rest = await receive(queueUrl, 171);
    expect(bodies(rest).indexOf('b-0')).toBe(170);
  });

  it('serves the flooding client again once its in-flight messages are deleted (it is noisy no longer)', async () => {
    // Prepare: A's 40 in flight (noisy); B's two and more of A's waiting.
    const queueUrl = await newQueue();
    await send(queueUrl, 'a', 60, 'client-a');
    const inFlight = await receive(queueUrl, 40);
    await send(queueUrl, 'b', 2, 'client-b');
    // Act: A's in flight are done; then receive.
    await remove(queueUrl, inFlight);
    const next = await receive(queueUrl, 3);
    // Assess: oldest first again (A's older messages before B's).
    expect(bodies(next)).toEqual(['a-40', 'a-41', 'a-42']);
  });
});

describe("the queue's own guarantees", () => {
  it('gives a message whose visibility ends back to its client, once', async () => {
    // Prepare: A noisy; one of its in-flight messages made visible again.
    const queueUrl = await newQueue();
    await send(queueUrl, 'a', 50, 'client-a');
    const inFlight = await receive(queueUrl, 40);
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: inFlight[0].ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    // Act
    const rest = await receive(queueUrl, 20);
    // Assess: every message of A once among the receives, a-0 twice in all (received again), none lost.
    expect(bodies(rest).sort()).toEqual(
      ['a-0', ...Array.from({ length: 10 }, (_, i) => `a-${40 + i}`)].sort(),
    );
    expect(await receive(queueUrl, 1)).toEqual([]);
  });

  it('counts and empties a purged queue, and serves messages sent after the purge', async () => {
    const queueUrl = await newQueue();
    await send(queueUrl, 'a', 25, 'client-a');
    const before = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    await send(queueUrl, 'c', 2, 'client-c');
    const after = await receive(queueUrl, 10);
    expect(before.Attributes?.ApproximateNumberOfMessages).toBe('25');
    expect(bodies(after)).toEqual(['c-0', 'c-1']);
  });

  it('moves a message past its receive count to the dead-letter queue, with its group id', async () => {
    // Prepare: a dead-letter queue after 1 receive.
    const dlqUrl = await newQueue({}, '-dlq');
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const queueUrl = await newQueue({
      VisibilityTimeout: '1',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
    });
    await send(queueUrl, 'a', 1, 'client-a');
    // Act: received once, not deleted; its visibility ends; the next receive moves it.
    await receive(queueUrl, 1);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const again = await receive(queueUrl, 1);
    const dead = await receive(dlqUrl, 1);
    // Assess
    expect(again).toEqual([]);
    expect(dead.map((m) => [m.Body, m.Attributes?.MessageGroupId])).toEqual([['a-0', 'client-a']]);
  });
});

describe('a fauxqs whose internals are not as expected', () => {
  it('is refused, naming what changed, rather than left first in, first out', () => {
    // Prepare: a queue as a later fauxqs might keep it (its ready messages no longer an array).
    const queue = new SqsQueue(
      'q',
      'http://127.0.0.1/000000000000/q',
      'arn:aws:sqs:eu-west-1:000000000000:q',
      {},
    );
    (queue as unknown as { messages: unknown }).messages = new Set();
    // Act / Assess
    expect(() => makeQueueFair(queue)).toThrow(/fauxqs changed: SqsQueue\.messages/);
  });

  it('leaves a FIFO queue as fauxqs serves it', () => {
    const queue = new SqsQueue(
      'q.fifo',
      'http://127.0.0.1/000000000000/q.fifo',
      'arn:aws:sqs:eu-west-1:000000000000:q.fifo',
      {
        FifoQueue: 'true',
      },
    );
    const messages = queue.messages;
    expect(makeQueueFair(queue).messages).toBe(messages);
  });
});
