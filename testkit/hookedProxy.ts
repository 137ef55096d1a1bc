import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './readBody.ts';

/** What a hook may do with the call it stopped: let it through (default), or answer an AWS error instead. */
export type HookOutcome = undefined | { status: number; type: string };

interface Hook {
  operation: string;
  /** Calls of the operation to let through before this hook runs. */
  skip: number;
  action: (body: Record<string, unknown>) => Promise<HookOutcome> | HookOutcome;
}

/**
 * A real HTTP proxy in front of the local DynamoDB or SQS (JSON protocol) that runs a test's own code at a chosen
 * point of a request: just before a given call goes through, it awaits the hook (which may change the data behind
 * the call, as a racing request or a worker would, or answer an error instead). Deterministic where a delay would
 * only make a race likely. It records every call (operation and body).
 *
 * @example
 * const proxy = await startHookedProxy(aws.dynamoEndpoint);
 * proxy.before('GetItem', async () => { await deleteTheEntry(); });
 */
export const startHookedProxy = async (upstream: string) => {
  const calls: string[] = [];
  const requests: { operation: string; body: Record<string, unknown> }[] = [];
  const hooks: Hook[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const operation = String(req.headers['x-amz-target'] ?? '')
      .split('.')
      .pop() as string;
    calls.push(operation);
    const parsed = JSON.parse(body.toString() || '{}') as Record<string, unknown>;
    requests.push({ operation, body: parsed });
    const index = hooks.findIndex((hook) => hook.operation === operation);
    let outcome: HookOutcome;
    if (index >= 0) {
      const hook = hooks[index];
      if (hook.skip > 0) hook.skip--;
      else {
        hooks.splice(index, 1);
        outcome = await hook.action(parsed);
      }
    }
    if (outcome) {
      res.writeHead(outcome.status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: outcome.type, message: 'answered by a test hook' }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([key]) => !['host', 'content-length', 'connection'].includes(key)),
    ) as Record<string, string>;
    try {
      const answer = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body });
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0',
      });
      res.end(await answer.text());
    } catch {
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The operation of every call, in order. */
    calls,
    /** Every call with its parsed body, in order. */
    requests,
    /** Runs `action` once, before the next call of `operation` after `skip` others go through. */
    before: (operation: string, action: Hook['action'], skip = 0) => {
      hooks.push({ operation, skip, action });
    },
    /** The hooks set but not run yet (a test checks that its race really happened). */
    pending: () => hooks.map((hook) => hook.operation),
    /** Forgets the calls seen and the hooks not run. */
    reset: () => {
      hooks.length = 0;
      calls.length = 0;
      requests.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
