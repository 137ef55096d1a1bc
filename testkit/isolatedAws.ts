import { randomBytes } from 'node:crypto';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { resetSettings } from '../lib/settings/environment.ts';
import type { QueuedRecord } from '../lib/types.ts';
import { localClientConfig } from '../local/aws.ts';
import { createLocalResources, type LocalResources } from '../local/resources.ts';
import { useTestKeys } from './apiKeys.ts';

/** Gives every queue and table of the template a unique suffix, so test files never share state. */
const renamed = (suffix: string) => {
  const config = structuredClone(inject('serverlessConfig'));
  for (const resource of Object.values(config.resources?.Resources ?? {})) {
    const properties = resource.Properties ?? {};
    for (const key of ['QueueName', 'TableName']) {
      if (typeof properties[key] === 'string') properties[key] = `${properties[key]}-${suffix}`;
    }
  }
  return config;
};

/**
 * Creates this test file's own queues, dead-letter queues and table on the shared fauxqs and dynalite, from the
 * definitions serverless.yml deploys, and points the service's settings (process.env) at them.
 *
 * @example
 * const aws = await isolatedAws();
 * const messages = await aws.drain(aws.resources.queues.CaseQueue.url);
 */
export const isolatedAws = async () => {
  const sqsEndpoint = inject('sqsEndpoint');
  const dynamoEndpoint = inject('dynamoEndpoint');
  const resources: LocalResources = await createLocalResources(renamed(randomBytes(4).toString('hex')), {
    sqs: sqsEndpoint,
    dynamodb: dynamoEndpoint,
  });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    ...resources.env,
  });
  // The service reads its settings once, until told to forget them.
  resetSettings();
  useTestKeys();
  const sqs = new SQSClient({ ...localClientConfig(sqsEndpoint), useQueueUrlAsEndpoint: false });

  /** Receives and deletes every message now on a queue, returning their bodies. */
  const drain = async (queueUrl: string): Promise<QueuedRecord[]> => {
    const bodies: QueuedRecord[] = [];
    for (;;) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 30,
        }),
      );
      if (!out.Messages?.length) return bodies;
      for (const message of out.Messages) {
        bodies.push(JSON.parse(message.Body ?? '{}'));
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
      }
    }
  };
  return { resources, sqs, drain, sqsEndpoint, dynamoEndpoint };
};
