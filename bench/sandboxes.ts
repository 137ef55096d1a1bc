/**
 * The SAP and Salesforce sandboxes for the batching and outage benchmarks (bench/batchedDelivery.ts,
 * bench/outageDrain.ts), in their own process so that the worker process is charged only for its own CPU.
 * `node bench/sandboxes.ts` prints one JSON line ({@link SandboxesInfo}) once both listen. The benchmarks use the
 * sandboxes' own operator endpoints (`GET /_sandbox/calls`, `POST /_sandbox/outage`); the one thing added here is
 * `GET /counts` on a third port: how many registrations and cases each holds, without listing them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import { startSapSandbox } from '../sandbox/sapSandbox.ts';
import { announce, awsFreeEnv, benchDir, type ServerProcess, startNodeServer } from './proc.ts';

export interface SandboxesInfo {
  sap: { url: string; servicePath: string; username: string; password: string };
  salesforce: { url: string; clientId: string; clientSecret: string };
  /** `GET {counts}/counts` answers {@link SandboxCounts}. */
  counts: string;
}

export interface SandboxCounts {
  registrations: number;
  cases: number;
}

/**
 * Starts both sandboxes in a child process.
 *
 * @example
 * const sandboxes = await startSandboxes();
 * await sandboxes.stop();
 */
export const startSandboxes = (): Promise<ServerProcess<SandboxesInfo>> =>
  startNodeServer<SandboxesInfo>(`${benchDir}/sandboxes.ts`, awsFreeEnv());

/** What the delivery worker needs to reach the sandboxes (the ERP_* and CRM_* settings of serverless.yml). */
export const downstreamEnv = (info: SandboxesInfo): Record<string, string> => ({
  ERP_BASE_URL: info.sap.url,
  ERP_SERVICE_PATH: info.sap.servicePath,
  ERP_USERNAME: info.sap.username,
  ERP_PASSWORD: info.sap.password,
  CRM_BASE_URL: info.salesforce.url,
  CRM_CLIENT_ID: info.salesforce.clientId,
  CRM_CLIENT_SECRET: info.salesforce.clientSecret,
});

/** Delivery calls each sandbox has received so far, and the records they carried (`GET /_sandbox/calls`). */
export const readDeliveryCalls = async (info: SandboxesInfo) => {
  const read = async (url: string, carried: 'registrations' | 'cases') => {
    const calls = (await (await fetch(`${url}/_sandbox/calls`)).json()) as Record<string, number | string>[];
    return {
      calls: calls.length,
      records: calls.reduce((sum, call) => sum + Number(call[carried] ?? 0), 0),
    };
  };
  const [sap, salesforce] = await Promise.all([
    read(info.sap.url, 'registrations'),
    read(info.salesforce.url, 'cases'),
  ]);
  return { sap, salesforce };
};

/** How many records each sandbox holds. */
export const readCounts = async (info: SandboxesInfo): Promise<SandboxCounts> =>
  (await (await fetch(`${info.counts}/counts`)).json()) as SandboxCounts;

/** Switches a sandbox's outage (`POST /_sandbox/outage`, as an operator does). */
export const setOutage = async (url: string, down: boolean): Promise<void> => {
  const answer = await fetch(`${url}/_sandbox/outage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ down }),
  });
  if (!answer.ok) throw new Error(`outage switch: HTTP ${answer.status}`);
};

/** What reached a sandbox during its current or last outage (`GET /_sandbox/outage`). */
export const readOutage = async (url: string) =>
  (await (await fetch(`${url}/_sandbox/outage`)).json()) as {
    down: boolean;
    callsWhileDown: number;
    deliveryCallsWhileDown: number;
  };

if (import.meta.main) {
  const [sap, salesforce] = await Promise.all([startSapSandbox(), startSalesforceSandbox()]);
  // The logged requests grow with every call; the benchmarks read only their summaries.
  const counts = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ registrations: sap.registrations.length, cases: salesforce.cases.length }));
  });
  await new Promise<void>((resolve) => counts.listen(0, '127.0.0.1', resolve));
  announce(
    {
      sap: { url: sap.url, servicePath: sap.servicePath, username: sap.username, password: sap.password },
      salesforce: {
        url: salesforce.url,
        clientId: salesforce.clientId,
        clientSecret: salesforce.clientSecret,
      },
      counts: `http://127.0.0.1:${(counts.address() as AddressInfo).port}`,
    } satisfies SandboxesInfo,
    async () => {
      counts.close();
      await Promise.all([sap.stop(), salesforce.stop()]);
    },
  );
}
