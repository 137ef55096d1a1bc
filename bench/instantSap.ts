/**
 * An instant SAP Gateway for the worker benchmark: just enough OData v2 for lib/downstream/erp. `GET` of the
 * service root with `X-CSRF-Token: Fetch` answers a token and a session cookie; `POST` to the entity set answers
 * 201 `{"d":{"DocumentNumber":…}}` at once, without checks (sandbox/sapSandbox.ts checks every field, keeps a
 * request log and scans its registrations per POST: right for tests, noise for a throughput figure).
 * Runs in its own process: `node bench/instantSap.ts` prints `{"url": …}`. `GET /_count` answers the counts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, baseEnv, benchDir, type ServerProcess, startNodeServer } from './proc.ts';

export const SAP_USER = 'BENCH';
export const SAP_PASSWORD = 'bench';
export const SAP_SERVICE_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';

export interface SapCounts {
  tokenFetches: number;
  posts: number;
}

export const startInstantSapServer = async () => {
  const counts: SapCounts = { tokenFetches: 0, posts: 0 };
  let document = 49_000_000;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/_count') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
        return;
      }
      if (req.method === 'GET' && String(req.headers['x-csrf-token']).toLowerCase() === 'fetch') {
        counts.tokenFetches++;
        res
          .writeHead(200, {
            'content-type': 'application/json',
            'x-csrf-token': 'bench-token',
            'set-cookie': ['SAP_SESSIONID_BCH_100=bench-session; path=/; HttpOnly'],
          })
          .end('{"d":{"EntitySets":["SalesRegistrationSet"]}}');
        return;
      }
      if (req.method === 'POST') {
        counts.posts++;
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(`{"d":{"DocumentNumber":"${++document}"}}`);
        return;
      }
      res.writeHead(404).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export const startInstantSap = (): Promise<ServerProcess<{ url: string }>> =>
  startNodeServer<{ url: string }>(`${benchDir}/instantSap.ts`, baseEnv());

export const readSapCounts = async (url: string): Promise<SapCounts> =>
  (await (await fetch(`${url}/_count`)).json()) as SapCounts;

if (import.meta.main) {
  const server = await startInstantSapServer();
  announce({ url: server.url }, server.close);
}
