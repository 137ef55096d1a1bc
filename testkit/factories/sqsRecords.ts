/** Test factories: messages as Lambda's SQS event source hands them to a worker. */
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/**
 * The next message of a queue (received once, hidden 60 s), as the event source hands it over on its first receive.
 *
 * @example
 * const sqsRecord = await receivedSqsRecord(aws.sqs, aws.resources.queues.SalesRegistrationQueue.url);
 */
export const receivedSqsRecord = async (
  sqs: SQSClient,
  queueUrl: string,
  eventSourceARN = 'arn:aws:sqs:eu-west-1:000000000000:sales',
): Promise<SQSRecord> => {
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 60 }),
  );
  const [message] = out.Messages ?? [];
  if (!message) throw new Error(`no message on ${queueUrl}`);
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ApproximateReceiveCount: '1' },
    eventSourceARN,
  } as unknown as SQSRecord;
};
