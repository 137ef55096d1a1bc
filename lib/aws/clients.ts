import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

/*
 * One client of each kind per Lambda container, created on first use and reused across invocations.
 * Endpoints come from the SDK's own settings (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_DYNAMODB),
 * which is how the local runner and the tests point them at fauxqs and dynalite.
 */
let sqs: SQSClient | undefined;
let dynamo: DynamoDBClient | undefined;

/** The container's SQS client. */
export const sqsClient = (): SQSClient => {
  // With an endpoint of our own (local runner, tests), send there even when a queue URL names another host.
  sqs ??= new SQSClient({ useQueueUrlAsEndpoint: !process.env.AWS_ENDPOINT_URL_SQS });
  return sqs;
};

/** The container's DynamoDB client. */
export const dynamoClient = (): DynamoDBClient => {
  dynamo ??= new DynamoDBClient({});
  return dynamo;
};
