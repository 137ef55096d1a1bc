import { sqsClient } from '../aws/clients.ts';
import { GetQueueAttributesCommand, SendMessageCommand } from '../aws/jsonProtocol/sqs.ts';
import { messageGroupOfBody } from '../queue/messageGroup.ts';

/** Dead-letter queue URL per delivery queue URL, for the container's life (the redrive policy does not change). */
const deadLetterUrls = new Map<string, string>();

/**
 * The URL of a queue's dead-letter queue, from its redrive policy (GetQueueAttributes, which the worker's role
 * allows on its queue for the event source): the same account and endpoint, the dead-letter queue's name.
 */
const deadLetterQueueUrl = async (queueUrl: string): Promise<string> => {
  const known = deadLetterUrls.get(queueUrl);
  if (known) return known;
  const out = await sqsClient().send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }),
  );
  const policy = JSON.parse(out.Attributes?.RedrivePolicy ?? '{}') as { deadLetterTargetArn?: string };
  const name = policy.deadLetterTargetArn?.split(':').at(-1);
  if (!name) throw new Error('the delivery queue has no dead-letter queue (RedrivePolicy)');
  const url = `${queueUrl.slice(0, queueUrl.lastIndexOf('/') + 1)}${name}`;
  deadLetterUrls.set(queueUrl, url);
  return url;
};

/**
 * Puts a message of a `failed` record on its queue's dead-letter queue, where `npm run redrive` and the dead-letter
 * alarm find it. The worker does this itself: attempts are counted on the record, and the queue's maxReceiveCount
 * is set far higher (copies bounced by a lease must never reach the dead-letter queue by their receive count).
 * The copy keeps its client's MessageGroupId: on AWS the redrive's message move task moves a message as it is, so
 * a copy without one would come back to the queue as a tenant of its own, served ahead of quiet clients.
 *
 * @example
 * await sendToDeadLetterQueue(queueUrlFor('caseRecord'), sqsRecord.body);
 */
export const sendToDeadLetterQueue = async (queueUrl: string, body: string): Promise<void> => {
  await sqsClient().send(
    new SendMessageCommand({
      QueueUrl: await deadLetterQueueUrl(queueUrl),
      MessageBody: body,
      ...messageGroupOfBody(body),
    }),
  );
};
