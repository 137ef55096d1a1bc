/**
 * A small HTTP server on 127.0.0.1 speaking the AWS JSON 1.1 protocol (POST /, `X-Amz-Target` names the operation),
 * as the service's own clients and the AWS SDK send it when `AWS_ENDPOINT_URL_<SERVICE>` points here. The local
 * event bus and the local Secrets Manager each answer their few operations through it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MAX_BODY_BYTES = 1024 * 1024;
const JSON_11 = 'application/x-amz-json-1.1';

/** An error answered in the protocol's shape (`__type`, `message`), which the clients turn into their exception. */
export class AwsJsonError extends Error {
  readonly type: string;
  readonly status: number;

  constructor(type: string, message: string, status = 400) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

/** One operation: the parsed request in, the answer's body out (or an AwsJsonError thrown). */
export type AwsJsonOperation = (request: Record<string, unknown>) => Promise<unknown>;

export interface AwsJsonServer {
  /** http://127.0.0.1:<port>: the value of the service's AWS_ENDPOINT_URL_<SERVICE>. */
  url: string;
  stop(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string | undefined> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
};

const answer = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': JSON_11, 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify(body));
};

/**
 * Starts answering the given operations, by their `X-Amz-Target` (e.g. `AWSEvents.PutEvents`).
 *
 * @example
 * const server = await startAwsJsonServer('local Secrets Manager', { 'secretsmanager.GetSecretValue': getSecretValue });
 * // AWS_ENDPOINT_URL_SECRETS_MANAGER=server.url
 */
export const startAwsJsonServer = async (
  name: string,
  operations: Record<string, AwsJsonOperation>,
  options: { port?: number; onError?: (error: unknown) => void } = {},
): Promise<AwsJsonServer> => {
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/')
        throw new AwsJsonError('UnknownOperationException', `The ${name} answers POST / only.`, 404);
      if (body === undefined) throw new AwsJsonError('ValidationException', 'Request too large.', 413);
      const target = String(req.headers['x-amz-target']);
      const operation = Object.hasOwn(operations, target) ? operations[target] : undefined;
      if (!operation)
        throw new AwsJsonError('UnknownOperationException', `Operation ${target} is not supported locally.`);
      let request: unknown;
      try {
        request = JSON.parse(body);
      } catch {
        throw new AwsJsonError('SerializationException', 'The request body is not JSON.');
      }
      answer(res, 200, await operation((request ?? {}) as Record<string, unknown>));
    } catch (error) {
      if (res.headersSent) return;
      if (error instanceof AwsJsonError)
        return answer(res, error.status, { __type: error.type, message: error.message });
      options.onError?.(error);
      answer(res, 500, { __type: 'InternalException', message: `The ${name} failed.` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
