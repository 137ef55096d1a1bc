import type { CrmClient } from '../crm/index.ts';
import { createCrmClient, crmConfigFromEnv } from '../crm/index.ts';
import type { ErpClient } from '../erp/index.ts';
import { createErpClient, erpConfigFromEnv } from '../erp/index.ts';
import type { CaseRecord, DeliveryOutcome, QueuedRecord, SalesRegistration } from '../types.ts';

/*
 * One client per downstream per container: they keep the CSRF token and cookies (SAP) and the OAuth token
 * (Salesforce) across invocations, so a warm worker fetches neither again.
 */
let erp: ErpClient | undefined;
let crm: CrmClient | undefined;

/** Forgets the cached clients (their tokens); for tests that change settings. */
export const resetDownstreamClients = (): void => {
  erp = undefined;
  crm = undefined;
};

/** Which downstream system a kind of record goes to, for logs and metrics. */
export const downstreamOf = (kind: QueuedRecord['kind']): 'erp' | 'crm' =>
  kind === 'salesRegistration' ? 'erp' : 'crm';

/**
 * Delivers one queued record to its downstream: a sales registration to SAP (with its id as `RegistrationId`),
 * a case to Salesforce (upserted under its id, the CrmId).
 */
export const deliverToDownstream = (message: QueuedRecord): Promise<DeliveryOutcome> => {
  if (message.kind === 'salesRegistration') {
    erp ??= createErpClient(erpConfigFromEnv());
    return erp.deliverSalesRegistration(message.record as SalesRegistration, message.id);
  }
  crm ??= createCrmClient(crmConfigFromEnv());
  return crm.upsertCase(message.record as CaseRecord, message.id);
};
