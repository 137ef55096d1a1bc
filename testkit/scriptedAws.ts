import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './readBody.ts';

export interface ScriptedAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
  /** Never answer this request (the client's attempt timeout must end it). */
  hang?: boolean;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A JSON-protocol error answer, as AWS services write them. */
export const awsError = (status: number, type: string, message = type): ScriptedAnswer => ({
  status,
  body: JSON.stringify({ __type: type, message }),
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `req-${status}` },
});

/** A successful JSON-protocol answer. */
export const awsOk = (fields: Record<string, unknown> = {}): ScriptedAnswer => ({
  status: 200,
  body: JSON.stringify(fields),
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'req-ok' },
});

/**
 * A real HTTP server standing in for an AWS endpoint whose answers a test scripts in order (the last one repeats),
 * recording every request it received, to see what a client sends, retries and gives up on.
 *
 * @example
 * const aws = await startScriptedAws([awsError(500, 'InternalError'), awsOk({ Item: item })]);
 */
export const startScriptedAws = async (script: ScriptedAnswer[]) => {
  const requests: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const body = (await readBody(req)).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const answer = script[Math.min(requests.length - 1, script.length - 1)];
    if (answer.hang) return;
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
