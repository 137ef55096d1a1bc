import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './readBody.ts';

type Mode =
  | { kind: 'pass' }
  /** Let `remaining` matching calls through, then answer every further one with 500 until healed. */
  | { kind: 'failAfter'; remaining: number }
  /** Refuse the first entry of the next matching SendMessageBatch (as SQS does under internal errors), once. */
  | { kind: 'refuseFirstEntryOnce' }
  /** Forward the next matching call, then cut the connection instead of answering (the answer is lost), once. */
  | { kind: 'loseAnswerOnce' };

/**
 * A real HTTP proxy in front of the local SQS or DynamoDB (JSON protocol) that injects faults into chosen
 * operations, so that tests see exactly what the service sees when they fail: 5xx answers, refused batch entries
 * and answers lost after the call took effect.
 *
 * @example
 * const proxy = await startFaultyProxy(sqsEndpoint, 'SendMessageBatch');
 * proxy.failAfter(1); // the second batch and all after it fail
 */
export const startFaultyProxy = async (target: string, operation: string) => {
  let mode: Mode = { kind: 'pass' };
  const calls: string[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const op =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    calls.push(op);
    let forwardBody = body;
    let refused: string | undefined;
    if (op === operation && mode.kind === 'failAfter') {
      if (mode.remaining <= 0) {
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: 'injected failure' }));
        return;
      }
      mode.remaining--;
    }
    if (op === 'SendMessageBatch' && op === operation && mode.kind === 'refuseFirstEntryOnce') {
      const parsed = JSON.parse(body.toString()) as { Entries: { Id: string }[] };
      refused = parsed.Entries.shift()?.Id;
      forwardBody = Buffer.from(JSON.stringify(parsed));
      mode = { kind: 'pass' };
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' ? undefined : forwardBody,
    });
    let text = await answer.text();
    if (op === operation && mode.kind === 'loseAnswerOnce') {
      mode = { kind: 'pass' };
      req.socket.destroy();
      return;
    }
    if (refused !== undefined) {
      const parsed = JSON.parse(text) as { Failed?: unknown[] };
      parsed.Failed = [
        ...(parsed.Failed ?? []),
        { Id: refused, SenderFault: false, Code: 'InternalError', Message: 'injected' },
      ];
      text = JSON.stringify(parsed);
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0',
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    failAfter: (successes: number) => {
      mode = { kind: 'failAfter', remaining: successes };
    },
    refuseFirstEntryOnce: () => {
      mode = { kind: 'refuseFirstEntryOnce' };
    },
    loseAnswerOnce: () => {
      mode = { kind: 'loseAnswerOnce' };
    },
    heal: () => {
      mode = { kind: 'pass' };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
