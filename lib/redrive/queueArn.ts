import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * The ARN of a queue of this account and region, found by its name (SQS's message move task takes ARNs):
 * GetQueueUrl, then GetQueueAttributes for `QueueArn`. The operators' role (OperationsRole) allows both on the
 * stack's queues and dead-letter queues.
 *
 * @returns the ARN, or '' when SQS gave none.
 * @example
 * await queueArnByName(sqs, 'dealer-gateway-prod-sales-registrations-dlq') // arn:aws:sqs:eu-west-1:…:…-dlq
 */
export const queueArnByName = async (sqs: SQSClient, queueName: string): Promise<string> => {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return out.Attributes?.QueueArn ?? '';
};
