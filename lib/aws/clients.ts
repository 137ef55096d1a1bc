import { CloudWatchClient } from './jsonProtocol/cloudWatch.ts';
import { DynamoDBClient } from './jsonProtocol/dynamodb.ts';
import { EventBridgeClient } from './jsonProtocol/eventBridge.ts';
import { SecretsManagerClient } from './jsonProtocol/secretsManager.ts';
import { SQSClient } from './jsonProtocol/sqs.ts';
import { SSMClient } from './jsonProtocol/ssm.ts';

/*
 * The service's AWS clients: the small JSON-protocol client of lib/aws/jsonProtocol for DynamoDB, SQS, Secrets
 * Manager and EventBridge, in every function. Measured (bench/FINDINGS.md): an API handler initialises in about 24 ms with it,
 * 33 ms with @aws-lite/client and 48 ms with the SDK, and its callers wait for that; the workers and the reconciler
 * use the same clients, so there is one seam and one behaviour to test. (The workers' SSM parameters still go
 * through Powertools Parameters and its SDK client: worker cold starts delay no caller.)
 *
 * One client of each kind per Lambda container, created on first use and reused across invocations. Endpoints come
 * from the SDK's own settings (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SECRETS_MANAGER),
 * which is how the local runner and the tests point them at fauxqs, dynalite and scripted servers.
 */
let sqs: SQSClient | undefined;
let dynamo: DynamoDBClient | undefined;
let secrets: SecretsManagerClient | undefined;
let events: EventBridgeClient | undefined;
let ssm: SSMClient | undefined;
let cloudWatch: CloudWatchClient | undefined;

/**
 * The container's SQS client.
 *
 * @example
 * await sqsClient().send(new SendMessageBatchCommand({ QueueUrl, Entries }));
 */
export const sqsClient = (): SQSClient => {
  // With an endpoint of our own (local runner, tests), send there even when a queue URL names another host.
  sqs ??= new SQSClient({ useQueueUrlAsEndpoint: !process.env.AWS_ENDPOINT_URL_SQS });
  return sqs;
};

/**
 * The container's DynamoDB client.
 *
 * @example
 * await dynamoClient().send(new GetItemCommand({ TableName, Key }));
 */
export const dynamoClient = (): DynamoDBClient => {
  // 5 s an attempt rather than the client's 2 s: a worker whose outcome write gives up after a delivery repeats
  // that delivery once its lease runs out; the intake's own deadline (abortSignal) still bounds every request.
  dynamo ??= new DynamoDBClient({ attemptTimeoutMs: 5_000 });
  return dynamo;
};

/**
 * The container's Secrets Manager client (the API keys).
 *
 * @example
 * await secretsManagerClient().send(new GetSecretValueCommand({ SecretId }));
 */
export const secretsManagerClient = (): SecretsManagerClient => {
  secrets ??= new SecretsManagerClient({});
  return secrets;
};

/**
 * The container's EventBridge client (record events; endpoint AWS_ENDPOINT_URL_EVENTBRIDGE locally). Two short
 * attempts: an event not published now stays in the record's outbox for the reconciler, so a slow bus never holds
 * up a worker.
 *
 * @example
 * await eventBridgeClient().send(new PutEventsCommand({ Entries }));
 */
export const eventBridgeClient = (): EventBridgeClient => {
  events ??= new EventBridgeClient({ maxAttempts: 2, attemptTimeoutMs: 2_000 });
  return events;
};

/**
 * The container's SSM client (the intake's content id key; the workers read their secrets through Powertools).
 *
 * @example
 * await ssmClient().send(new GetParameterCommand({ Name, WithDecryption: true }));
 */
export const ssmClient = (): SSMClient => {
  ssm ??= new SSMClient({});
  return ssm;
};

/**
 * The container's CloudWatch client (the console's "Activity" page reads the service's metrics with it).
 *
 * @example
 * await cloudWatchClient().send(new GetMetricDataCommand({ MetricDataQueries, StartTime, EndTime }));
 */
export const cloudWatchClient = (): CloudWatchClient => {
  cloudWatch ??= new CloudWatchClient({});
  return cloudWatch;
};
