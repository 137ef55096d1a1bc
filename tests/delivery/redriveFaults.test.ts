/**
 * Redrive by hand when things go wrong: a dead letter that is no queued record, the queue refusing messages
 * moved back, SQS refusing the records queued again. Nothing is lost: a message leaves the dead-letter queue
 * only once it is on the queue again, and a reopened record SQS refused is left due for the reconciler.
 * Every test has a table and queues of its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StatusRecord } from '../../lib/records/types.ts';
import { redriveByHand } from '../../lib/redrive/redrive.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { localClientConfig } from '../../local/aws.ts';
import { caseInput } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { awsOk, startScriptedAws } from '../../testkit/scriptedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
/** Every SQS call of the redrive (the operator's client and the service's own) passes this proxy. */
let proxy: Awaited<ReturnType<typeof startFaultyProxy>>;
let sqs: SQSClient;

beforeAll(async () => {
  aws = await isolatedAws();
  proxy = await startFaultyProxy(aws.sqsEndpoint, 'SendMessageBatch');
  sqs = new SQSClient({ ...localClientConfig(proxy.endpoint), useQueueUrlAsEndpoint: false });
});

afterAll(async () => {
  sqs.destroy();
  await proxy.stop();
});

beforeEach(async () => {
  aws = await freshAws();
  process.env.AWS_ENDPOINT_URL_SQS = proxy.endpoint;
  proxy.heal();
});

const failedCase = (): StatusRecord => ({
  id: randomBytes(16).toString('hex'),
  kind: 'caseRecord',
  status: 'failed',
  // Redrive finds failed records through the `status` index.
  statusKey: 'caseRecord#failed',
  attempts: 3,
  acceptedAt: '2026-11-22T08:00:00.000Z',
  updatedAt: '2026-11-22T08:30:00.000Z',
  requestId: 'r',
  owner: 'example-web-forms',
  record: caseInput() as unknown as StatusRecord['record'],
  error: 'HTTP 503',
});
const queues = () => ({
  sqs,
  kind: 'caseRecord' as const,
  queueUrl: aws.resources.queues.CaseQueue.url,
  deadLetterQueueUrl: aws.resources.queues.CaseDeadLetterQueue.url,
});
const deadLetter = (body: string) =>
  aws.sqs.send(new SendMessageCommand({ QueueUrl: queues().deadLetterQueueUrl, MessageBody: body }));
const messageOf = (r: StatusRecord) =>
  JSON.stringify({ id: r.id, kind: r.kind, requestId: r.requestId, record: r.record });
/** Messages on a queue, visible or not (a received message is invisible for a while, yet still there). */
const messagesOn = async (queueUrl: string) => {
  const { Attributes = {} } = await aws.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible)
  );
};

describe('redrive by hand', () => {
  it('empties the dead-letter queue: every message moved is deleted there', async () => {
    // Prepare: twelve dead letters, more than one receive takes.
    const records = Array.from({ length: 12 }, failedCase);
    await seedStatusRecords(records);
    for (const r of records) await deadLetter(messageOf(r));
    // Act
    const result = await redriveByHand(queues());
    // Assess
    expect(result).toEqual({ moved: 12, requeued: 0 });
    expect(await messagesOn(queues().deadLetterQueueUrl)).toBe(0);
    expect(await messagesOn(queues().queueUrl)).toBe(12);
  });

  it('moves back a dead letter that is no queued record, and reopens nothing for it', async () => {
    // Prepare: a message without an id, and a failed record whose message is gone.
    const lost = failedCase();
    await seedStatusRecords([lost]);
    await deadLetter(JSON.stringify({ note: 'not written by this service' }));
    // Act
    const result = await redriveByHand(queues());
    const queued = await aws.drain(queues().queueUrl);
    // Assess
    expect(result).toEqual({ moved: 1, requeued: 1 });
    expect(queued.map((m) => m.id ?? 'no id').sort()).toEqual([lost.id, 'no id'].sort());
    expect(await messagesOn(queues().deadLetterQueueUrl)).toBe(0);
  });

  it('stops when the queue refuses a message moved back, which stays in the dead-letter queue', async () => {
    // Prepare: three dead letters; the queue refuses the first entry of the batch moved back.
    const records = [failedCase(), failedCase(), failedCase()];
    await seedStatusRecords(records);
    for (const r of records) await deadLetter(messageOf(r));
    proxy.refuseFirstEntryOnce();
    // Act
    const outcome = await redriveByHand(queues()).catch((error: Error) => error);
    // Assess
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe('1 message(s) could not be moved back');
    expect(await messagesOn(queues().queueUrl)).toBe(2);
    expect(await messagesOn(queues().deadLetterQueueUrl)).toBe(1);
  });

  it('stops when the queue takes none of them, deleting nothing from the dead-letter queue', async () => {
    // Prepare: an SQS (a scripted server) whose dead-letter queue holds one message and whose queue refuses it.
    const record = failedCase();
    await seedStatusRecords([record]);
    const body = messageOf(record);
    const scripted = await startScriptedAws([
      awsOk({
        Messages: [
          {
            MessageId: 'm-1',
            ReceiptHandle: 'receipt-1',
            MD5OfBody: createHash('md5').update(body).digest('hex'),
            Body: body,
          },
        ],
      }),
      awsOk({ Successful: [], Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] }),
    ]);
    const scriptedSqs = new SQSClient(localClientConfig(scripted.endpoint));
    // Act
    const outcome = await redriveByHand({ ...queues(), sqs: scriptedSqs }).catch((error: Error) => error);
    scriptedSqs.destroy();
    await scripted.stop();
    // Assess
    expect((outcome as Error).message).toBe('1 message(s) could not be moved back');
    expect(scripted.requests.map((r) => r.headers['x-amz-target'])).toEqual([
      'AmazonSQS.ReceiveMessage',
      'AmazonSQS.SendMessageBatch',
    ]);
  });

  it('counts as requeued only the reopened records SQS took; the others are left due for the reconciler', async () => {
    // Prepare: two failed records whose dead letters are gone; SQS refuses every send.
    const records = [failedCase(), failedCase()];
    await seedStatusRecords(records);
    proxy.failAfter(0);
    // Act
    const result = await redriveByHand(queues());
    proxy.heal();
    // Assess
    expect(result).toEqual({ moved: 0, requeued: 0 });
    expect(await messagesOn(queues().queueUrl)).toBe(0);
    for (const r of records)
      expect(await getStatusRecord(r.id)).toMatchObject({
        status: 'accepted',
        openKind: 'caseRecord',
        dueAt: expect.any(String),
      });
  });
});
