import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsCredentials, signRequest } from '../../lib/aws/jsonProtocol/signatureV4.ts';
import { awsOk, type SeenRequest, startScriptedAws } from '../../testkit/scriptedAws.ts';

/*
 * The oracle is the AWS SDK itself: each case sends a request through an SDK client to a local server, then signs
 * the same method, path, headers, body and instant with signRequest and expects the same Authorization header.
 */
let aws: Awaited<ReturnType<typeof startScriptedAws>>;
beforeAll(async () => {
  aws = await startScriptedAws([awsOk({ Successful: [], Failed: [] })]);
});
afterAll(() => aws.stop());

const withToken: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token+with/odd=chars',
};
const withoutToken: AwsCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret/with+chars' };

/** Re-signs a request the SDK sent, with the headers the SDK signed. */
const resign = async (seen: SeenRequest, service: string, region: string, credentials: AwsCredentials) => {
  const authorization = String(seen.headers.authorization);
  const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1].split(';') ?? [];
  const headers: Record<string, string> = {};
  for (const name of signed) {
    if (['host', 'x-amz-date', 'x-amz-security-token'].includes(name)) continue;
    headers[name] = String(seen.headers[name]);
  }
  const stamp = String(seen.headers['x-amz-date']);
  const date = new Date(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
  );
  return signRequest({
    method: seen.method,
    host: String(seen.headers.host),
    path: seen.url,
    headers,
    body: seen.body,
    service,
    region,
    credentials,
    date,
  });
};

describe('signRequest', () => {
  it('signs a DynamoDB request with a session token exactly as the SDK does', async () => {
    // Prepare
    const client = new DynamoDBClient({
      endpoint: aws.endpoint,
      region: 'eu-west-1',
      credentials: withToken,
    });
    // Act
    await client.send(
      new PutItemCommand({
        TableName: 'records',
        Item: { pk: { S: 'sr-1' }, name: { S: 'Zoë  Ångström ✓' } },
      }),
    );
    const seen = aws.requests.at(-1) as SeenRequest;
    const ours = await resign(seen, 'dynamodb', 'eu-west-1', withToken);
    // Assess
    expect(ours.authorization).toBe(seen.headers.authorization);
    expect(ours['x-amz-security-token']).toBe(withToken.sessionToken);
  });

  it('signs an SQS request without a session token, in another region, exactly as the SDK does', async () => {
    // Prepare
    const client = new SQSClient({
      endpoint: aws.endpoint,
      region: 'ap-southeast-2',
      credentials: withoutToken,
    });
    // Act
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: `${aws.endpoint}/000000000000/sales`,
        Entries: [{ Id: '0', MessageBody: '{"text":"tab\\t and  spaces"}' }],
      }),
    );
    const seen = aws.requests.at(-1) as SeenRequest;
    const ours = await resign(seen, 'sqs', 'ap-southeast-2', withoutToken);
    // Assess
    expect(ours.authorization).toBe(seen.headers.authorization);
    expect(ours['x-amz-security-token']).toBeUndefined();
  });

  it('gives a different signature when any signed part changes', async () => {
    // Prepare
    const request = {
      method: 'POST',
      host: 'dynamodb.eu-west-1.amazonaws.com',
      path: '/',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
      body: '{}',
      service: 'dynamodb',
      region: 'eu-west-1',
      credentials: withoutToken,
      date: new Date('2026-11-22T04:00:00Z'),
    };
    // Act
    const base = (await signRequest(request)).authorization;
    const variants = (
      await Promise.all([
        signRequest({ ...request, body: '{ }' }),
        signRequest({ ...request, region: 'eu-west-2' }),
        signRequest({ ...request, date: new Date('2026-11-22T04:00:01Z') }),
        signRequest({
          ...request,
          headers: { ...request.headers, 'x-amz-target': 'DynamoDB_20120810.PutItem' },
        }),
        signRequest({ ...request, credentials: { ...withoutToken, secretAccessKey: 'other' } }),
      ])
    ).map((headers) => headers.authorization);
    // Assess
    expect(new Set([base, ...variants]).size).toBe(6);
    expect(base).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261122\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
  });
});
