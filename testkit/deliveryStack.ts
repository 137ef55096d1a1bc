/**
 * What the worker-level tests stand on, started once per file: isolated AWS (fauxqs, dynalite), the SAP and Salesforce
 * sandboxes (real HTTP servers) and an EventBridge recorder, with the settings the adapters and the publisher read
 * pointing at them.
 */
import { type SalesforceSandbox, startSalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../sandbox/sapSandbox.ts';
import { startEventBridgeRecorder } from './eventBridgeRecorder.ts';
import { isolatedAws } from './isolatedAws.ts';

export interface DeliveryStack {
  aws: Awaited<ReturnType<typeof isolatedAws>>;
  sap: SapSandbox;
  salesforce: SalesforceSandbox;
  bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
  salesQueue: string;
  caseQueue: string;
  /** Stops the sandboxes and the recorder (SAP and Salesforce back up first). */
  stop(): Promise<void>;
}

/**
 * Starts the stand-ins and points ERP_*, CRM_* and the bus settings at them.
 *
 * @example
 * let stack: DeliveryStack;
 * beforeAll(async () => { stack = await startDeliveryStack(); });
 * afterAll(() => stack.stop());
 */
export const startDeliveryStack = async (): Promise<DeliveryStack> => {
  const aws = await isolatedAws();
  const [sap, salesforce, bus] = await Promise.all([
    startSapSandbox(),
    startSalesforceSandbox(),
    startEventBridgeRecorder(),
  ]);
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    CRM_BASE_URL: salesforce.url,
    CRM_CLIENT_ID: salesforce.clientId,
    CRM_CLIENT_SECRET: salesforce.clientSecret,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
  return {
    aws,
    sap,
    salesforce,
    bus,
    salesQueue: aws.resources.queues.SalesRegistrationQueue.url,
    caseQueue: aws.resources.queues.CaseQueue.url,
    stop: async () => {
      sap.outage.setDown(false);
      salesforce.outage.setDown(false);
      await Promise.all([sap.stop(), salesforce.stop(), bus.stop()]);
    },
  };
};
