import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Message, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendToDeadLetterQueue } from '../../lib/delivery/deadLetters.ts';
import { queuedRecordOf } from '../../lib/queue/queuedRecord.ts';
import { messageBody, sendRecords } from '../../lib/queue/sendRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { redriveByHand, redriveOnAws } from '../../lib/redrive/redrive.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { localClientConfig } from '../../local/aws.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { caseInput } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { readBody } from '../../testkit/readBody.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sqs: SQSClient;
/** The event bus, a real HTTP server taking PutEvents: a reopened record's event is published at once. */
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
beforeAll(async () => {
  [aws, bus] = await Promise.all([isolatedAws(), startEventBridgeRecorder()]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-redrive',
  });
  sqs = new SQSClient({ ...localClientConfig(aws.sqsEndpoint), useQueueUrlAsEndpoint: false });
});
afterAll(() => bus.stop());

const failedRecord = (
  kind: StatusRecord['kind'],
  status: StatusRecord['status'] = 'failed',
): StatusRecord => {
  const at = '2026-11-22T08:00:00.000Z';
  return {
    id: randomBytes(16).toString('hex'),
    kind,
    status,
    // Redrive finds failed records through the `status` index.
    statusKey: `${kind}#${status}`,
    attempts: 3,
    acceptedAt: at,
    updatedAt: at,
    requestId: 'r',
    owner: 'example-web-forms',
    record: caseInput() as unknown as StatusRecord['record'],
    error: 'HTTP 503',
  };
};

describe('redrive', () => {
  it('moves dead-lettered messages back to their queue by hand (local queue) and reopens their records', async () => {
    // Prepare: two failed cases whose messages are in the dead-letter queue.
    const records = [failedRecord('caseRecord'), failedRecord('caseRecord')];
    await seedStatusRecords(records);
    const deadLetters = aws.resources.queues.CaseDeadLetterQueue.url;
    for (const r of records) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: deadLetters,
          MessageBody: JSON.stringify({ id: r.id, kind: r.kind, requestId: r.requestId, record: r.record }),
        }),
      );
    }
    bus.reset();
    // Act
    const moved = await redriveByHand({
      sqs,
      kind: 'caseRecord',
      queueUrl: aws.resources.queues.CaseQueue.url,
      deadLetterQueueUrl: deadLetters,
    });
    // Assess
    expect(moved).toEqual({ moved: 2, requeued: 0 });
    // Each reopening is published right away, not left to the reconciler's next run.
    expect(
      bus
        .details()
        .map((detail) => [detail.recordId, detail.state])
        .sort(),
    ).toEqual(records.map((r) => [r.id, 'accepted']).sort());
    expect(await aws.drain(deadLetters)).toEqual([]);
    expect((await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id).sort()).toEqual(
      records.map((r) => r.id).sort(),
    );
    for (const r of records) {
      expect(await getStatusRecord(r.id)).toMatchObject({
        status: 'accepted',
        attempts: 3,
        error: 'HTTP 503',
      });
    }
  });

  it('on AWS reopens the failed records of that kind only, then starts the message move task', async () => {
    // Prepare: a real HTTP server answering SQS's StartMessageMoveTask (fauxqs has no move task).
    const calls: { target: string; body: Record<string, string> }[] = [];
    const sqsApi = createServer(async (req, res) => {
      calls.push({
        target: String(req.headers['x-amz-target']),
        body: JSON.parse((await readBody(req)).toString()),
      });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ TaskHandle: 'task-1' }));
    });
    await new Promise<void>((resolve) => sqsApi.listen(0, '127.0.0.1', resolve));
    const awsSqs = new SQSClient(
      localClientConfig(`http://127.0.0.1:${(sqsApi.address() as AddressInfo).port}`),
    );
    const failedSale = failedRecord('salesRegistration');
    const failedCase = failedRecord('caseRecord');
    const deliveredSale = failedRecord('salesRegistration', 'delivered');
    // A failed sale whose personal data retention removed: there is nothing left to deliver.
    const purgedSale = {
      ...failedRecord('salesRegistration'),
      personalDataRemovedAt: '2026-11-23T08:00:00.000Z',
    };
    await seedStatusRecords([failedSale, failedCase, deliveredSale, purgedSale]);
    // Act
    const result = await redriveOnAws(awsSqs, 'salesRegistration', {
      queueArn: 'arn:aws:sqs:eu-west-1:000000000000:sales',
      deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:000000000000:sales-dlq',
    });
    sqsApi.close();
    // Assess
    expect(result).toEqual({ reopened: 1, taskHandle: 'task-1', personalDataRemoved: 1 });
    expect(calls).toEqual([
      {
        target: 'AmazonSQS.StartMessageMoveTask',
        body: {
          SourceArn: 'arn:aws:sqs:eu-west-1:000000000000:sales-dlq',
          DestinationArn: 'arn:aws:sqs:eu-west-1:000000000000:sales',
        },
      },
    ]);
    // Reopened into the `open` index: if its message has expired from the dead-letter queue, the reconciler
    // queues it once it is due.
    expect(await getStatusRecord(failedSale.id)).toMatchObject({
      status: 'accepted',
      openKind: 'salesRegistration',
      dueAt: expect.any(String),
    });
    expect((await getStatusRecord(failedCase.id))?.status).toBe('failed');
    expect((await getStatusRecord(deliveredSale.id))?.status).toBe('delivered');
    expect((await getStatusRecord(purgedSale.id))?.status).toBe('failed');
  });

  it('after a restart (local dead letters gone) reopens and queues the failed records, each once', async () => {
    // Prepare: failed cases whose dead letters were lost with the local queue's memory; one has its message.
    const [withMessage, lost1, lost2] = [
      failedRecord('caseRecord'),
      failedRecord('caseRecord'),
      failedRecord('caseRecord'),
    ];
    await seedStatusRecords([withMessage, lost1, lost2]);
    const deadLetters = aws.resources.queues.CaseDeadLetterQueue.url;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: deadLetters,
        MessageBody: JSON.stringify({
          id: withMessage.id,
          kind: withMessage.kind,
          requestId: withMessage.requestId,
          record: withMessage.record,
        }),
      }),
    );
    // Act
    const result = await redriveByHand({
      sqs,
      kind: 'caseRecord',
      queueUrl: aws.resources.queues.CaseQueue.url,
      deadLetterQueueUrl: deadLetters,
    });
    const queued = await aws.drain(aws.resources.queues.CaseQueue.url);
    const again = await redriveByHand({
      sqs,
      kind: 'caseRecord',
      queueUrl: aws.resources.queues.CaseQueue.url,
      deadLetterQueueUrl: deadLetters,
    });
    // Assess
    // (A failed case of the test above is in the same table: it is reopened too.)
    const ours = new Set([withMessage.id, lost1.id, lost2.id]);
    expect(result.moved).toBe(1);
    expect(result.requeued).toBe(queued.length - 1);
    expect(
      queued
        .map((m) => m.id)
        .filter((id) => ours.has(id))
        .sort(),
    ).toEqual([...ours].sort());
    expect(again).toEqual({ moved: 0, requeued: 0 });
    for (const r of [withMessage, lost1, lost2])
      expect(await getStatusRecord(r.id)).toMatchObject({ status: 'accepted', openKind: 'caseRecord' });
  });
});

describe('redrive and fair share', () => {
  /** Receives the queue's messages 10 at a time, leaving each in flight (a worker busy with it), until `wanted`. */
  const receiveUntil = async (queueUrl: string, wanted: (m: Message) => boolean): Promise<Message[]> => {
    const served: Message[] = [];
    for (;;) {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 120 }),
      );
      const messages = out.Messages ?? [];
      for (const message of messages) {
        served.push(message);
        if (wanted(message)) return served;
      }
      if (messages.length === 0) return served;
    }
  };

  it("a dealer's 300 dead-lettered records redriven keep its group: a quiet dealer's sale is served 31st, not 301st", async () => {
    // Prepare: 300 failed cases of one dealer, each dead-lettered as the worker does it; the queue empty.
    const queueUrl = aws.resources.queues.CaseQueue.url;
    const deadLetters = aws.resources.queues.CaseDeadLetterQueue.url;
    const noisy = Array.from({ length: 300 }, () => ({
      ...failedRecord('caseRecord'),
      owner: 'noisy-dealer',
    }));
    await seedStatusRecords(noisy);
    for (const record of noisy) await sendToDeadLetterQueue(queueUrl, messageBody(queuedRecordOf(record)));
    await aws.drain(queueUrl);
    // On AWS the message move task moves each dead letter as it is: each must carry the dealer's group id itself.
    const deadLettered = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetters,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    // Act: the redrive by hand (the local queue's), then one sale of a quiet dealer, then workers receive.
    const redriven = await redriveByHand({
      sqs,
      kind: 'caseRecord',
      queueUrl,
      deadLetterQueueUrl: deadLetters,
    });
    const quiet = { ...failedRecord('caseRecord'), owner: 'quiet-dealer' };
    expect(await sendRecords(queueUrl, [queuedRecordOf(quiet)])).toEqual([]);
    const served = await receiveUntil(queueUrl, (m) => JSON.parse(m.Body ?? '{}').id === quiet.id);
    // Assess: once the dealer holds 30 in flight it is a noisy neighbour, and the quiet dealer comes next. Without
    // its group id every redriven message is a tenant of its own, served first in, first out: the quiet sale 301st.
    const ownersServed = served.map((m) => JSON.parse(m.Body ?? '{}').owner);
    expect(deadLettered.Messages?.map((m) => m.Attributes?.MessageGroupId)).toEqual(
      Array(10).fill('noisy-dealer'),
    );
    expect(redriven.moved).toBe(300);
    expect(ownersServed.at(-1)).toBe('quiet-dealer');
    expect(ownersServed.filter((owner) => owner === 'noisy-dealer')).toHaveLength(30);
  });
});

afterAll(() => sqs.destroy());
