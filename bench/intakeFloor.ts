/**
 * The floor of an intake request: the same body parsed and validated with lib/validation, then the same AWS
 * operations, in the same numbers, with payloads of the same size, made bare through SDK clients configured as
 * lib/aws/clients.ts configures them (its own: lib's may be the JSON-protocol clients, as deployed), with the same
 * batch sizes and parallelism. No middleware, no content ids (a random
 * 32-hex id instead), no duplicate decisions, no answers checked.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RecordKind } from '../lib/types.ts';
import { validateCaseRecord } from '../lib/validation/caseRecord.ts';
import { validateSalesRegistrations } from '../lib/validation/salesRegistration.ts';

let sqs: SQSClient | undefined;
let dynamo: DynamoDBClient | undefined;
const sqsClient = () => (sqs ??= new SQSClient({ useQueueUrlAsEndpoint: !process.env.AWS_ENDPOINT_URL_SQS }));
const dynamoClient = () => (dynamo ??= new DynamoDBClient({}));

const chunk = <T>(items: T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
};

interface Status {
  id: string;
  kind: RecordKind;
  status: 'accepted';
  attempts: 0;
  acceptedAt: string;
  updatedAt: string;
  owner: string;
  requestId: string;
  record: object;
}

/**
 * The calls acceptRecords makes for new records: a conditional PutItem each (the one write that decides who creates
 * a record, so that racing requests queue it once), 16 in flight, as lib/intake/acceptRecords.ts does.
 */
const store = async (statuses: Status[]): Promise<void> => {
  const table = process.env.RECORDS_TABLE as string;
  const item = (status: Status) => marshall({ pk: status.id, ...status }, { removeUndefinedValues: true });
  let next = 0;
  const lane = async () => {
    while (next < statuses.length) {
      const status = statuses[next++];
      await dynamoClient().send(
        new PutItemCommand({
          TableName: table,
          Item: item(status),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, statuses.length) }, lane));
};

/** SendMessageBatch, 10 entries a call, 10 calls in flight (as lib/queue/sendRecords.ts). */
const queue = async (queueUrl: string, statuses: Status[]): Promise<void> => {
  const batches = chunk(statuses, 10);
  for (let i = 0; i < batches.length; i += 10) {
    await Promise.all(
      batches.slice(i, i + 10).map((batch) =>
        sqsClient().send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((status, index) => ({
              Id: String(index),
              MessageBody: JSON.stringify({
                id: status.id,
                kind: status.kind,
                requestId: status.requestId,
              }),
            })),
          }),
        ),
      ),
    );
  }
};

/** The status record's owner (the calling client); the floor stores the same field, it checks no key. */
const ownerOf = (kind: RecordKind) => (kind === 'salesRegistration' ? 'example-dealer' : 'example-web-forms');

const accept = async (kind: RecordKind, records: object[], requestId: string): Promise<string[]> => {
  const at = new Date().toISOString();
  const statuses: Status[] = records.map((record) => ({
    id: randomUUID().replaceAll('-', ''),
    kind,
    status: 'accepted',
    attempts: 0,
    acceptedAt: at,
    updatedAt: at,
    owner: ownerOf(kind),
    requestId,
    record,
  }));
  await store(statuses);
  const queueUrl = (
    kind === 'salesRegistration' ? process.env.SALES_REGISTRATION_QUEUE_URL : process.env.CASE_QUEUE_URL
  ) as string;
  await queue(queueUrl, statuses);
  return statuses.map((status) => status.id);
};

const answer = (body: unknown): APIGatewayProxyResult => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** POST /erp/sales_registration, bare. */
export const floorSales = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const result = validateSalesRegistrations(JSON.parse(event.body as string));
  if (!result.ok) throw new Error('floor: invalid sales registration body');
  const ids = await accept('salesRegistration', result.value, event.requestContext.requestId);
  return answer({
    success: true,
    message: `${ids.length} sales registration(s) accepted`,
    registrations: ids.map((id, i) => ({ id, FrameNum: result.value[i].FrameNum })),
  });
};

/** POST /crm/case, bare: JSON, or a form through node:querystring. */
export const floorCase = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const isForm = String(event.headers['Content-Type']).startsWith('application/x-www-form-urlencoded');
  const body = isForm ? parseQuery(event.body as string) : JSON.parse(event.body as string);
  const result = validateCaseRecord(body);
  if (!result.ok) throw new Error('floor: invalid case body');
  const [crmId] = await accept('caseRecord', [result.value], event.requestContext.requestId);
  return answer({ CrmId: crmId, CrmResponseSuccess: true });
};
