import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ResourceNotFoundException,
  UpdateItemCommand,
} from '../../lib/aws/jsonProtocol/dynamodb.ts';
import { AwsNetworkError, AwsServiceError } from '../../lib/aws/jsonProtocol/errors.ts';
import { GetSecretValueCommand, SecretsManagerClient } from '../../lib/aws/jsonProtocol/secretsManager.ts';
import { QueueDoesNotExist, SendMessageBatchCommand, SQSClient } from '../../lib/aws/jsonProtocol/sqs.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { awsError, awsOk, type ScriptedAnswer, startScriptedAws } from '../../testkit/scriptedAws.ts';

/*
 * The JSON-protocol clients that the API functions' bundles use in place of the SDK (scripts/bundle.ts), against
 * the real local stand-ins (dynalite, fauxqs) and against scripted HTTP servers for what those cannot do on
 * demand (5xx, throttling, silence, damaged checksums).
 */
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let table: string;
let queueUrl: string;
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

beforeAll(async () => {
  aws = await isolatedAws();
  table = aws.resources.tables.RecordsTable.name;
  queueUrl = aws.resources.queues.SalesRegistrationQueue.url;
});

const dynamo = () => new DynamoDBClient({ endpoint: aws.dynamoEndpoint, region: 'eu-west-1', credentials });
const sqs = () => new SQSClient({ endpoint: aws.sqsEndpoint, region: 'eu-west-1', credentials });

describe('DynamoDB over the JSON protocol (dynalite)', () => {
  it('puts, reads, updates and batch-reads items', async () => {
    // Prepare
    const client = dynamo();
    const pk = `json-${Date.now()}`;
    // Act
    await client.send(
      new PutItemCommand({ TableName: table, Item: { pk: { S: pk }, state: { S: 'accepted' } } }),
    );
    const updated = await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: pk } },
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':s': { S: 'delivered' } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    await client.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: [{ PutRequest: { Item: { pk: { S: `${pk}-b` } } } }] },
      }),
    );
    const got = await client.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
    );
    const batch = await client.send(
      new BatchGetItemCommand({
        RequestItems: { [table]: { Keys: [{ pk: { S: pk } }, { pk: { S: `${pk}-b` } }] } },
      }),
    );
    // Assess
    expect(updated.Attributes).toEqual({ pk: { S: pk }, state: { S: 'delivered' } });
    expect(got.Item).toEqual({ pk: { S: pk }, state: { S: 'delivered' } });
    expect(got.$metadata).toMatchObject({ httpStatusCode: 200, attempts: 1 });
    expect(batch.Responses?.[table].map((item) => item.pk.S).sort()).toEqual([pk, `${pk}-b`]);
  });

  it('rejects a failed condition with the class the code tests for, at once and with the item', async () => {
    // Prepare
    const client = dynamo();
    const item = { pk: { S: `json-cond-${Date.now()}` }, state: { S: 'accepted' } };
    const put = new PutItemCommand({
      TableName: table,
      Item: item,
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    await client.send(put);
    // Act
    const error = await client.send(put).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(error).toBeInstanceOf(AwsServiceError);
    expect(error).toMatchObject({
      name: 'ConditionalCheckFailedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });
  });

  it('reports a missing table as ResourceNotFoundException without retrying', async () => {
    // Act
    const error = await dynamo()
      .send(new GetItemCommand({ TableName: 'no-such-table', Key: { pk: { S: 'x' } } }))
      .catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(ResourceNotFoundException);
    expect(error).toMatchObject({ $metadata: { attempts: 1 } });
  });
});

describe('SQS over the JSON protocol (fauxqs)', () => {
  it('sends a batch whose bodies arrive unchanged', async () => {
    // Prepare
    const bodies = ['{"a":1}', '{"text":"Zoë \\u00e9 ✓"}'];
    // Act
    const out = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
      }),
    );
    const received = await aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    // Assess
    expect(out.Successful?.map((entry) => entry.Id).sort()).toEqual(['0', '1']);
    expect(out.Failed ?? []).toEqual([]);
    expect((received.Messages ?? []).map((m) => m.Body).sort()).toEqual([...bodies].sort());
  });

  it('reports a queue that does not exist as QueueDoesNotExist', async () => {
    // Act
    const error = await sqs()
      .send(
        new SendMessageBatchCommand({
          QueueUrl: `${aws.sqsEndpoint}/000000000000/nope`,
          Entries: [{ Id: '0', MessageBody: 'x' }],
        }),
      )
      .catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(QueueDoesNotExist);
    expect(error).toMatchObject({ $fault: 'client' });
  });
});

describe('retries, time-outs and checks (scripted endpoint)', () => {
  let scripted: Awaited<ReturnType<typeof startScriptedAws>> | undefined;
  afterEach(async () => {
    await scripted?.stop();
    scripted = undefined;
  });
  const scriptedDynamo = async (script: ScriptedAnswer[], config = {}) => {
    scripted = await startScriptedAws(script);
    return new DynamoDBClient({ endpoint: scripted.endpoint, region: 'eu-west-1', credentials, ...config });
  };

  it('retries 5xx answers and throttling, signing each attempt afresh, and returns the answer that succeeds', async () => {
    // Prepare
    const client = await scriptedDynamo([
      awsError(500, 'com.amazonaws.dynamodb.v20120810#InternalServerError'),
      awsError(400, 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException'),
      awsOk({ Item: { pk: { S: 'x' } } }),
    ]);
    // Act
    const out = await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));
    // Assess
    expect(out.Item).toEqual({ pk: { S: 'x' } });
    expect(out.$metadata.attempts).toBe(3);
    expect(scripted?.requests).toHaveLength(3);
    expect(scripted?.requests.every((r) => r.headers['x-amz-target'] === 'DynamoDB_20120810.GetItem')).toBe(
      true,
    );
    expect(
      scripted?.requests.every((r) => String(r.headers.authorization).startsWith('AWS4-HMAC-SHA256 ')),
    ).toBe(true);
  });

  it('gives up after the attempts allowed with the last error', async () => {
    // Prepare
    const client = await scriptedDynamo([awsError(503, 'ServiceUnavailable', 'down')], { maxAttempts: 2 });
    // Act
    const error = await client.send(new GetItemCommand({ TableName: 't', Key: {} })).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(AwsServiceError);
    expect(error).toMatchObject({ name: 'ServiceUnavailable', message: 'down', $fault: 'server' });
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 503, attempts: 2 } });
    expect(scripted?.requests).toHaveLength(2);
  });

  it('does not retry a client error that is not throttling', async () => {
    // Prepare
    const client = await scriptedDynamo([
      awsError(400, 'com.amazonaws.dynamodb.v20120810#ValidationException', 'bad key'),
    ]);
    // Act
    const error = await client.send(new GetItemCommand({ TableName: 't', Key: {} })).catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({ name: 'ValidationException', message: 'bad key', $fault: 'client' });
    expect(scripted?.requests).toHaveLength(1);
  });

  it('ends an attempt that gets no answer and tries again', async () => {
    // Prepare
    const client = await scriptedDynamo(
      [{ status: 200, body: '', hang: true }, awsOk({ Item: { pk: { S: 'late' } } })],
      {
        attemptTimeoutMs: 200,
      },
    );
    // Act
    const out = await client.send(new GetItemCommand({ TableName: 't', Key: {} }));
    // Assess
    expect(out.Item).toEqual({ pk: { S: 'late' } });
    expect(out.$metadata.attempts).toBe(2);
  });

  it('reports an endpoint nobody listens on as a network error after every attempt', async () => {
    // Prepare
    scripted = await startScriptedAws([awsOk()]);
    const closed = scripted.endpoint;
    await scripted.stop();
    scripted = undefined;
    const client = new DynamoDBClient({ endpoint: closed, region: 'eu-west-1', credentials, maxAttempts: 2 });
    // Act
    const error = await client.send(new GetItemCommand({ TableName: 't', Key: {} })).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(AwsNetworkError);
    expect(error).toMatchObject({ $metadata: { attempts: 2 } });
  });

  it('refuses an answer that is not JSON', async () => {
    // Prepare
    const client = await scriptedDynamo([{ status: 200, body: '<html>' }]);
    // Act
    const error = await client.send(new GetItemCommand({ TableName: 't', Key: {} })).catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({ name: 'DeserializationError', $metadata: { httpStatusCode: 200 } });
    expect(scripted?.requests).toHaveLength(1);
  });

  it('keeps the fields of an error answer, except those that would pass for its own', async () => {
    // Prepare
    const client = await scriptedDynamo([
      {
        status: 400,
        body: JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
          message: 'The conditional request failed',
          Item: { pk: { S: 'x' } },
          statusCode: 400,
          name: 'Other',
        }),
      },
    ]);
    // Act
    const error = await client
      .send(new PutItemCommand({ TableName: 't', Item: {} }))
      .catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(error).toMatchObject({ name: 'ConditionalCheckFailedException', Item: { pk: { S: 'x' } } });
    expect((error as { statusCode?: unknown }).statusCode).toBeUndefined();
  });

  it('names an error page that is not JSON by its status', async () => {
    // Prepare
    const client = await scriptedDynamo([{ status: 502, body: '<html>bad gateway</html>' }], {
      maxAttempts: 1,
    });
    // Act
    const error = await client.send(new GetItemCommand({ TableName: 't', Key: {} })).catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({
      name: 'Http502Error',
      $fault: 'server',
      $metadata: { httpStatusCode: 502 },
    });
  });

  it('refuses an SQS answer whose MD5 of a body differs from what was sent', async () => {
    // Prepare
    scripted = await startScriptedAws([
      awsOk({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '0'.repeat(32) }] }),
    ]);
    const client = new SQSClient({ endpoint: scripted.endpoint, region: 'eu-west-1', credentials });
    // Act
    const error = await client
      .send(
        new SendMessageBatchCommand({
          QueueUrl: `${scripted.endpoint}/0/q`,
          Entries: [{ Id: '0', MessageBody: 'hello' }],
        }),
      )
      .catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({ name: 'InvalidChecksumError' });
  });

  it('sends SQS calls to the queue URL host when no endpoint is configured, and signs for the environment credentials', async () => {
    // Prepare
    scripted = await startScriptedAws([awsOk({ Successful: [], Failed: [] })]);
    const env = { ...process.env };
    delete process.env.AWS_ENDPOINT_URL_SQS;
    delete process.env.AWS_ENDPOINT_URL;
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDENV',
      AWS_SECRET_ACCESS_KEY: 's',
      AWS_SESSION_TOKEN: 'tok',
    });
    try {
      const client = new SQSClient({ region: 'eu-west-1' });
      // Act
      await client.send(
        new SendMessageBatchCommand({ QueueUrl: `${scripted.endpoint}/000000000000/sales`, Entries: [] }),
      );
    } finally {
      process.env = env;
    }
    // Assess
    const seen = scripted.requests[0];
    expect(seen.headers['x-amz-target']).toBe('AmazonSQS.SendMessageBatch');
    expect(seen.headers['x-amz-security-token']).toBe('tok');
    expect(String(seen.headers.authorization)).toContain('Credential=AKIDENV/');
    expect(String(seen.headers.authorization)).toContain('/eu-west-1/sqs/aws4_request');
  });

  it('reads a secret from Secrets Manager with the JSON 1.1 protocol', async () => {
    // Prepare
    scripted = await startScriptedAws([awsOk({ Name: 'keys', SecretString: '{"dealer":"k"}' })]);
    const client = new SecretsManagerClient({
      endpoint: scripted.endpoint,
      region: 'eu-west-1',
      credentials,
    });
    // Act
    const out = await client.send(new GetSecretValueCommand({ SecretId: 'keys' }));
    // Assess
    expect(out.SecretString).toBe('{"dealer":"k"}');
    expect(scripted.requests[0].headers).toMatchObject({
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'secretsmanager.GetSecretValue',
    });
    expect(JSON.parse(scripted.requests[0].body)).toEqual({ SecretId: 'keys' });
  });
});
