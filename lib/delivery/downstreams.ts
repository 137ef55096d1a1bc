import type { ApiUsage } from '../downstream/crm/index.ts';
import { type CrmClient, createCrmClient, crmConfigFromEnv } from '../downstream/crm/index.ts';
import { createErpClient, type ErpClient, erpConfigFromEnv } from '../downstream/erp/index.ts';
import type { BatchDelivery, DeliveryOutcome } from '../downstream/types.ts';
import type { StatusRecord } from '../records/types.ts';
import { environment, resetSettings } from '../settings/environment.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';
import { readSecrets } from './secrets.ts';

/*
 * One client per downstream per container: they keep the CSRF token and cookies (SAP) and the OAuth token
 * (Salesforce) across invocations, so a warm worker fetches neither again. A client is replaced when its
 * secret changes (rotation).
 */
let erp: { client: ErpClient; secret: string } | undefined;
let crm: { client: CrmClient; secret: string } | undefined;

/** Forgets the cached clients (their tokens) and the settings read; for tests that change settings. */
export const resetDownstreamClients = (): void => {
  erp = undefined;
  crm = undefined;
  resetSettings();
};

/** Which downstream system a kind of record goes to, for logs and metrics. */
export const downstreamOf = (kind: RecordKind): 'erp' | 'crm' =>
  kind === 'salesRegistration' ? 'erp' : 'crm';

// The configuration is read only when a client is (re)built, not per delivery: copying the environment is slow.
const erpClient = async (): Promise<ErpClient> => {
  const { ERP_PASSWORD: secret = '' } = await readSecrets(['ERP_PASSWORD']);
  if (erp?.secret !== secret) {
    erp = { client: createErpClient(erpConfigFromEnv({ ...environment(), ERP_PASSWORD: secret })), secret };
  }
  return erp.client;
};

const crmClient = async (): Promise<CrmClient> => {
  const { CRM_CLIENT_SECRET: secret = '' } = await readSecrets(['CRM_CLIENT_SECRET']);
  if (crm?.secret !== secret) {
    crm = {
      client: createCrmClient(crmConfigFromEnv({ ...environment(), CRM_CLIENT_SECRET: secret })),
      secret,
    };
  }
  return crm.client;
};

/**
 * Delivers one stored record (the status record the worker claimed, never a message's body) to its downstream: a
 * sales registration to SAP (with its id as `RegistrationId`), a case to Salesforce (upserted under its id, the
 * CrmId).
 *
 * @example
 * const outcome = await deliverToDownstream(claim.claimed);
 */
export const deliverToDownstream = async (
  stored: Pick<StatusRecord, 'id' | 'kind' | 'record'>,
): Promise<DeliveryOutcome> =>
  stored.kind === 'salesRegistration'
    ? (await erpClient()).deliverSalesRegistration(stored.record as SalesRegistration, stored.id)
    : (await crmClient()).upsertCase(stored.record as CaseRecord, stored.id);

/** A batched delivery's outcomes, with the Salesforce API usage its answers reported (CRM only). */
export interface DownstreamDelivery extends BatchDelivery {
  apiUsage?: ApiUsage;
}

/**
 * Delivers every claimed record of one downstream in as few calls as its protocol allows: SAP `$batch` calls of
 * up to ERP_BATCH_SIZE, Salesforce Collections calls of up to 200; a lone record goes by the single call. One
 * outcome per record id, each decided as a single call would decide it; a failure of a whole call is one outcome
 * object shared by every record of that call (the worker counts it once for the hold).
 *
 * @example
 * const { outcomes, apiUsage } = await deliverAllToDownstream('crm', claimedRecords);
 */
export const deliverAllToDownstream = async (
  downstream: 'erp' | 'crm',
  stored: readonly Pick<StatusRecord, 'id' | 'kind' | 'record'>[],
): Promise<DownstreamDelivery> =>
  downstream === 'erp'
    ? (await erpClient()).deliverSalesRegistrations(
        stored.map(({ id, record }) => ({ id, record: record as SalesRegistration })),
      )
    : (await crmClient()).upsertCases(stored.map(({ id, record }) => ({ id, record: record as CaseRecord })));
