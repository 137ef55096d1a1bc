import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { readBody } from './readBody.ts';

/** How the recorder answers the next PutEvents calls. */
export type BusMode = 'up' | 'down' | 'refuse-entries';

/**
 * A real HTTP server that answers EventBridge's PutEvents as the bus does (JSON 1.1), records every entry it took,
 * and can be put down (HTTP 500) or made to refuse entries (FailedEntryCount > 0) for a test.
 *
 * @example
 * const bus = await startEventBridgeRecorder();
 * process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.endpoint;
 */
export const startEventBridgeRecorder = async () => {
  const entries: PutEventsRequestEntry[] = [];
  /** The raw request bodies, to search for what must never be sent. */
  const bodies: string[] = [];
  let mode: BusMode = 'up';
  let calls = 0;
  const server = createServer(async (req, res) => {
    const body = (await readBody(req)).toString();
    calls++;
    bodies.push(body);
    const target = String(req.headers['x-amz-target'] ?? '');
    res.setHeader('content-type', 'application/x-amz-json-1.1');
    if (target !== 'AWSEvents.PutEvents') {
      res.writeHead(400).end(JSON.stringify({ __type: 'UnknownOperationException' }));
      return;
    }
    if (mode === 'down') {
      res.writeHead(500).end(JSON.stringify({ __type: 'InternalException', message: 'down for a test' }));
      return;
    }
    const { Entries = [] } = JSON.parse(body) as { Entries?: PutEventsRequestEntry[] };
    if (mode === 'refuse-entries') {
      res.end(
        JSON.stringify({
          FailedEntryCount: Entries.length,
          Entries: Entries.map(() => ({ ErrorCode: 'InternalFailure', ErrorMessage: 'refused for a test' })),
        }),
      );
      return;
    }
    entries.push(...Entries);
    res.end(
      JSON.stringify({
        FailedEntryCount: 0,
        Entries: Entries.map((_, i) => ({ EventId: `e-${calls}-${i}` })),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    entries,
    bodies,
    /** The details of the entries taken, parsed. */
    details: () => entries.map((entry) => JSON.parse(entry.Detail ?? '{}') as Record<string, unknown>),
    calls: () => calls,
    setMode: (next: BusMode) => {
      mode = next;
    },
    reset: () => {
      entries.length = 0;
      bodies.length = 0;
      calls = 0;
      mode = 'up';
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
