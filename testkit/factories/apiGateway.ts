import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { defaultKeyFor } from '../apiKeys.ts';

/** An API Gateway REST (v1) proxy event, as API Gateway and serverless-offline deliver it. */
export const apiEvent = (overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent => ({
  resource: '/',
  path: '/',
  httpMethod: 'POST',
  headers: {},
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: null,
  stageVariables: null,
  body: null,
  isBase64Encoded: false,
  requestContext: {
    requestId: randomUUID(),
  } as APIGatewayProxyEvent['requestContext'],
  ...overrides,
});

/** A POST with a JSON body (any value, serialised; a string is sent as it is), with a valid key for the path. */
export const jsonPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  apiEvent({
    path,
    resource: path,
    headers: { 'x-api-key': defaultKeyFor(path), 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** A POST of an HTML form (application/x-www-form-urlencoded). */
export const formPost = (
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  apiEvent({
    path,
    resource: path,
    headers: {
      'x-api-key': defaultKeyFor(path),
      'Content-Type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });

/** A status look-up, with the key of the client that owns records of that kind in tests. */
export const statusGet = (
  path: string,
  pathParameters: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  apiEvent({
    path,
    httpMethod: 'GET',
    pathParameters,
    headers: { 'x-api-key': defaultKeyFor(path), ...headers },
  });

/**
 * A look-up of sales records by frame number (`GET /erp/sales_registration?FrameNum=…`), with the dealer's key;
 * several values are sent as a repeated parameter, as API Gateway hands it over (the last one single-valued).
 */
export const frameGet = (frameNums: string | string[] | undefined, headers: Record<string, string> = {}) => {
  const values = frameNums === undefined ? undefined : [frameNums].flat();
  return apiEvent({
    path: '/erp/sales_registration',
    resource: '/erp/sales_registration',
    httpMethod: 'GET',
    headers: { 'x-api-key': defaultKeyFor('/erp'), ...headers },
    queryStringParameters: values ? { FrameNum: values[values.length - 1] } : null,
    multiValueQueryStringParameters: values ? { FrameNum: values } : null,
  });
};

/** A Lambda context. */
export const lambdaContext = (): Context =>
  ({
    awsRequestId: randomUUID(),
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:test',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/test',
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;
