/**
 * An "instant AWS endpoint" for the intake benchmark: one HTTP server that answers the SQS (JSON protocol) and
 * DynamoDB calls the handlers make at once, with success, and counts calls and request bytes per operation.
 * It runs in its own process (`node bench/instantAws.ts` prints `{"endpoint": …}` when it listens), so that
 * the process running the handlers is charged only for its own CPU.
 *
 * `GET /_count` answers `{"<Service>.<Operation>": {"calls": n, "bytes": n}, …}` since the start.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, baseEnv, benchDir, type ServerProcess, startNodeServer } from './proc.ts';

export type CallCounts = Record<string, { calls: number; bytes: number }>;

type Body = Record<string, unknown>;

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/** SQS JSON-protocol answers: every message accepted, nothing to receive. */
const sqsAnswer = (operation: string, input: Body): Body => {
  switch (operation) {
    case 'SendMessageBatch':
      return {
        Successful: (input.Entries as { Id: string; MessageBody: string }[]).map((entry) => ({
          Id: entry.Id,
          MessageId: randomUUID(),
          MD5OfMessageBody: md5(entry.MessageBody),
        })),
        Failed: [],
      };
    case 'SendMessage':
      return { MessageId: randomUUID(), MD5OfMessageBody: md5(String(input.MessageBody)) };
    case 'DeleteMessageBatch':
      return {
        Successful: (input.Entries as { Id: string }[]).map((entry) => ({ Id: entry.Id })),
        Failed: [],
      };
    case 'ReceiveMessage':
      return { Messages: [] };
    case 'GetQueueAttributes':
      return { Attributes: { QueueArn: 'arn:aws:sqs:eu-west-1:000000000000:instant' } };
    default:
      return {};
  }
};

/** DynamoDB answers: every write succeeds, every read finds nothing (so every record is new). */
const dynamoAnswer = (operation: string, input: Body): Body => {
  switch (operation) {
    case 'BatchGetItem':
      return {
        Responses: Object.fromEntries(Object.keys(input.RequestItems as Body).map((table) => [table, []])),
        UnprocessedKeys: {},
      };
    case 'BatchWriteItem':
      return { UnprocessedItems: {} };
    case 'Query':
    case 'Scan':
      return { Items: [], Count: 0, ScannedCount: 0 };
    default:
      // PutItem, GetItem (no Item: not found), UpdateItem, DeleteItem
      return {};
  }
};

export const startInstantAwsServer = async (port = 0) => {
  const counts: CallCounts = {};
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/_count') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
        return;
      }
      const target = String(req.headers['x-amz-target'] ?? '');
      const [service, operation = ''] = target.split('.');
      const raw = Buffer.concat(chunks);
      const key = `${service === 'AmazonSQS' ? 'SQS' : service.startsWith('DynamoDB') ? 'DynamoDB' : service}.${operation}`;
      const count = counts[key] ?? { calls: 0, bytes: 0 };
      count.calls++;
      count.bytes += raw.byteLength;
      counts[key] = count;
      const input = raw.byteLength ? (JSON.parse(raw.toString('utf8')) as Body) : {};
      let answer: Body;
      if (service === 'AmazonSQS') answer = sqsAnswer(operation, input);
      else if (service.startsWith('DynamoDB_')) answer = dynamoAnswer(operation, input);
      else {
        res
          .writeHead(400, { 'content-type': 'application/x-amz-json-1.0' })
          .end(JSON.stringify({ __type: 'UnknownOperationException', message: `unknown target ${target}` }));
        return;
      }
      res
        .writeHead(200, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': randomUUID(),
        })
        .end(JSON.stringify(answer));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Starts the instant endpoint in its own process. */
export const startInstantAws = (): Promise<ServerProcess<{ endpoint: string }>> =>
  startNodeServer<{ endpoint: string }>(`${benchDir}/instantAws.ts`, baseEnv());

/** Calls per operation since the server started. */
export const readCounts = async (endpoint: string): Promise<CallCounts> =>
  (await (await fetch(`${endpoint}/_count`)).json()) as CallCounts;

/** What happened between two {@link readCounts}. */
export const countsBetween = (before: CallCounts, after: CallCounts): CallCounts =>
  Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [
        key,
        { calls: value.calls - (before[key]?.calls ?? 0), bytes: value.bytes - (before[key]?.bytes ?? 0) },
      ])
      .filter(([, value]) => (value as { calls: number }).calls > 0),
  ) as CallCounts;

if (import.meta.main) {
  const server = await startInstantAwsServer();
  announce({ endpoint: server.endpoint }, server.close);
}
