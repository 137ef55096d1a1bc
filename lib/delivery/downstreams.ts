import {
  type CrmClient,
  createCrmClient,
  crmConfigFromEnv,
  DEFAULT_CASE_MAPPING,
  loadCaseMapping,
  MAX_COLLECTION_SIZE,
} from '../downstream/crm/index.ts';
import {
  createErpClient,
  type ErpClient,
  erpBatchSizeFrom,
  erpConfigFromEnv,
} from '../downstream/erp/index.ts';
import type { CallOutcome } from '../downstream/types.ts';
import type { StatusRecord } from '../records/types.ts';
import { environment, resetSettings } from '../settings/environment.ts';
import { simulateSalesforceCall } from '../simulators/salesforceSimulator.ts';
import { simulateSapCall } from '../simulators/sapSimulator.ts';
import {
  type CaseRecord,
  DOWNSTREAM_OF_KIND,
  type Downstream,
  type RecordKind,
  type SalesRegistration,
} from '../types.ts';
import { readSecrets } from './secrets.ts';

/**
 * A stored record as a call carries it: its id (RegistrationId, CrmId), the normalised record, and the requests of
 * it that reached the downstream so far (the simulators' `RETRY` reads them).
 */
export type StoredRecord = Pick<StatusRecord, 'id' | 'record'> & { attempts?: number };

/**
 * A downstream as the worker drives it (the one seam between delivery and the adapters): how many records one call
 * carries, and one call. The worker slices a batch into calls and asks the hold before each.
 */
export interface DownstreamCaller {
  /** The records one call carries at most: ERP_BATCH_SIZE for SAP, a Collections call's 200 for Salesforce. */
  readonly callSize: number;
  /**
   * One call for up to `callSize` stored records (a lone one by the single call); never throws per record.
   *
   * @throws RangeError for more than `callSize` distinct records.
   */
  call(stored: readonly StoredRecord[]): Promise<CallOutcome>;
}

/*
 * One client per downstream per container: they keep the CSRF token and cookies (SAP) and the OAuth token
 * (Salesforce) across invocations, so a warm worker fetches neither again. A client is replaced when its
 * secret changes (rotation).
 */
let erp: { caller: DownstreamCaller; secret: string } | undefined;
let crm: { caller: DownstreamCaller; secret: string } | undefined;

/** Forgets the cached clients (their tokens) and the settings read; for tests that change settings. */
export const resetDownstreamClients = (): void => {
  erp = undefined;
  crm = undefined;
  simulated = {};
  resetSettings();
};

/** Which downstream system a kind of record goes to, for logs and metrics. */
export const downstreamOf = (kind: RecordKind): Downstream => DOWNSTREAM_OF_KIND[kind];

const erpCaller = (client: ErpClient): DownstreamCaller => ({
  callSize: client.callSize,
  call: (stored) =>
    client.deliverSalesRegistrations(
      stored.map(({ id, record }) => ({ id, record: record as SalesRegistration })),
    ),
});

const crmCaller = (client: CrmClient): DownstreamCaller => ({
  callSize: client.callSize,
  call: (stored) =>
    client.upsertCases(stored.map(({ id, record }) => ({ id, record: record as CaseRecord }))),
});

/**
 * The downstream a kind of record goes to, built once per container from ONE read of its configuration, the secret
 * included (on AWS the secret comes from Parameter Store: lib/delivery/secrets.ts); rebuilt when the secret changes.
 * A setting that cannot be read is an error naming it (ErpConfigError, CrmConfigError), never a silent default: the
 * worker then records the records' calls as not attempted, naming the setting.
 *
 * @example
 * const sap = await downstreamCaller('erp');
 * const { outcomes, failedWhole } = await sap.call(claimed.slice(0, sap.callSize));
 */
export const downstreamCaller = async (downstream: Downstream): Promise<DownstreamCaller> => {
  if (downstream === 'erp') {
    const { ERP_PASSWORD: secret = '' } = await readSecrets(['ERP_PASSWORD']);
    if (erp?.secret !== secret) {
      const config = erpConfigFromEnv({ ...environment(), ERP_PASSWORD: secret });
      erp = { caller: erpCaller(createErpClient(config)), secret };
    }
    return erp.caller;
  }
  const { CRM_CLIENT_SECRET: secret = '' } = await readSecrets(['CRM_CLIENT_SECRET']);
  if (crm?.secret !== secret) {
    const config = crmConfigFromEnv({ ...environment(), CRM_CLIENT_SECRET: secret });
    crm = { caller: crmCaller(createCrmClient(config)), secret };
  }
  return crm.caller;
};

let simulated: { erp?: DownstreamCaller; crm?: DownstreamCaller } = {};

/**
 * Test mode's downstream for a kind of record (docs/API.md, "Test mode"): the built-in SAP or Salesforce simulator
 * (lib/simulators), which answers every record on its own by the rules the sandboxes follow and the scenario its
 * last name asks for. It makes no request to anything: no test record ever reaches ERP_BASE_URL or CRM_BASE_URL,
 * and it needs none of their settings. Calls as large as the real ones (ERP_BATCH_SIZE; 200 cases).
 *
 * @example
 * const sap = simulatorCaller('erp');
 * const { outcomes } = await sap.call(claimed); // no HTTP request made
 */
export const simulatorCaller = (downstream: Downstream): DownstreamCaller => {
  if (downstream === 'erp') {
    simulated.erp ??= {
      callSize: erpBatchSizeFrom(environment()),
      call: async (stored) => simulateSapCall(stored),
    };
    return simulated.erp;
  }
  const mappingFile = environment().CRM_CASE_MAPPING_FILE?.trim();
  const mapping = mappingFile ? loadCaseMapping(mappingFile) : DEFAULT_CASE_MAPPING;
  simulated.crm ??= {
    callSize: MAX_COLLECTION_SIZE,
    call: async (stored) => simulateSalesforceCall(stored, mapping),
  };
  return simulated.crm;
};
