import { DynamoDBClient as SdkDynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient as SdkSQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { dynamoClient, sqsClient } from '../../lib/aws/clients.ts';
import { JsonProtocolClient } from '../../lib/aws/jsonProtocol/client.ts';

/*
 * The intake suites run twice (vitest.config.ts): with the JSON-protocol clients, as the deployed API bundles and
 * npm start run the handlers, and with the SDK, which lib/store and lib/queue also serve the delivery workers
 * with. This proves each run has the clients it claims.
 */
describe('the AWS clients the service code gets', () => {
  it('are the JSON-protocol clients in the json-clients project and the SDK in the sdk project', ({
    task,
  }) => {
    // Prepare
    Object.assign(process.env, { AWS_REGION: 'eu-west-1' });
    const json = task.file.projectName === 'json-clients';
    // Act
    const clients = [dynamoClient(), sqsClient()];
    // Assess
    expect(clients.every((client) => client instanceof JsonProtocolClient)).toBe(json);
    expect(clients[0] instanceof SdkDynamoDBClient).toBe(!json);
    expect(clients[1] instanceof SdkSQSClient).toBe(!json);
  });
});
