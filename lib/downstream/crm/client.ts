import { personalValuesOf } from '../../privacy/fieldClassification.ts';
import { type DeliveryOutcome, distinctItems, singleCall } from '../types.ts';
import type { ApiUsage } from './apiUsage.ts';
import { MAX_COLLECTION_SIZE, upsertCaseCollection } from './collections.ts';
import {
  DEFAULT_CASE_EXTERNAL_ID_FIELD,
  DEFAULT_CRM_API_VERSION,
  DEFAULT_CRM_TIMEOUT_MS,
} from './constants.ts';
import { CrmConfigError } from './errors.ts';
import { mapCase } from './mapping.ts';
import { DEFAULT_CASE_MAPPING } from './mappingFile.ts';
import { patchJson } from './patchJson.ts';
import { classifyCrmAnswer, isInvalidSession } from './response.ts';
import { createTokenCache } from './tokenCache.ts';
import type { AccessToken, CrmClient, CrmConfig, PatchAnswer } from './types.ts';

/**
 * Creates the Salesforce adapter for cases (docs/behaviour.md#salesforce-protocol). Create it once per process: it caches
 * the access token until Salesforce refuses it. The upsert by external id makes a repeat update the case
 * it created instead of creating a second one. Never throws per record: every result is a
 * {@link DeliveryOutcome}.
 *
 * @throws CrmConfigError when the mapping would write the external id field (it belongs in the URL).
 * @example
 * const crm = createCrmClient(crmConfigFromEnv());
 * const outcome = await crm.upsertCase(caseRecord, 'b3f1…');
 * if (outcome.kind === 'delivered') console.log(outcome.downstreamId); // '500…'
 */
export function createCrmClient(config: CrmConfig): CrmClient {
  const timeoutMs = config.timeoutMs ?? DEFAULT_CRM_TIMEOUT_MS;
  const apiVersion = config.apiVersion ?? DEFAULT_CRM_API_VERSION;
  const externalIdField = config.externalIdField ?? DEFAULT_CASE_EXTERNAL_ID_FIELD;
  const mapping = config.mapping ?? DEFAULT_CASE_MAPPING;
  if (externalIdField in mapping) {
    throw new CrmConfigError(
      `case mapping writes ${externalIdField}, the external id field; it is set by the URL`,
    );
  }

  const tokens = createTokenCache(config.baseUrl, config.clientId, config.clientSecret, timeoutMs);
  let latestApiUsage: ApiUsage | undefined;
  /** How many answers reported a usage: tells whether a call's own answer did. */
  let usageReadings = 0;
  const onApiUsage = (usage: ApiUsage) => {
    latestApiUsage = usage;
    usageReadings++;
  };
  const collections = { tokens, apiVersion, externalIdField, mapping, timeoutMs, onApiUsage };

  const upsert = async (token: AccessToken, crmId: string, body: string): Promise<PatchAnswer> => {
    const url =
      `${token.instanceUrl}/services/data/${apiVersion}/sobjects/Case/` +
      `${encodeURIComponent(externalIdField)}/${encodeURIComponent(crmId)}`;
    const { answer, usage } = await patchJson(url, token, body, timeoutMs);
    if (usage) onApiUsage(usage);
    return answer;
  };

  const client: CrmClient = {
    async upsertCase(caseRecord, crmId): Promise<DeliveryOutcome> {
      const body = JSON.stringify(mapCase(caseRecord, mapping));
      const first = await tokens.current();
      if (!first.ok) return { kind: 'transient', error: first.error, reachedDownstream: false };

      let answer = await upsert(first.token, crmId, body);
      let refusedOnce = false;
      if (answer.kind === 'answered' && isInvalidSession(answer.status, answer.text)) {
        // The token expired or was revoked: one new token, one repeat. The refused PATCH did reach
        // Salesforce, so every outcome from here on has reachedDownstream true.
        refusedOnce = true;
        const renewed = await tokens.renew(first.token);
        if (!renewed.ok) {
          return { kind: 'transient', error: `${renewed.error} (token refused)`, reachedDownstream: true };
        }
        answer = await upsert(renewed.token, crmId, body);
        if (answer.kind === 'answered' && isInvalidSession(answer.status, answer.text)) {
          // No loop: a fresh token refused at once is a Salesforce-side problem; retry with backoff later.
          return {
            kind: 'transient',
            error: 'HTTP 401: INVALID_SESSION_ID again right after a new token was issued',
            reachedDownstream: true,
          };
        }
      }

      switch (answer.kind) {
        case 'answered':
          return classifyCrmAnswer(answer.status, answer.text, personalValuesOf('caseRecord', caseRecord));
        case 'timedOut':
          // Salesforce may have processed it; the status record counts it as an attempt.
          return { kind: 'transient', error: answer.error, reachedDownstream: true };
        case 'networkError':
          // Not answered, so not an attempt: unless the refused first PATCH already was one.
          return { kind: 'transient', error: answer.error, reachedDownstream: refusedOnce };
      }
    },

    callSize: MAX_COLLECTION_SIZE,

    async upsertCases(items) {
      // One record per external id: a case listed twice (two queue messages of one case) goes once.
      const distinct = distinctItems(items, MAX_COLLECTION_SIZE);
      if (distinct.length === 1) {
        const [{ id, record }] = distinct;
        const readingsBefore = usageReadings;
        const outcome = await client.upsertCase(record, id);
        // Only this call's own answer's usage: one remembered from an earlier answer says nothing of this call.
        return singleCall(id, outcome, usageReadings > readingsBefore ? latestApiUsage : undefined);
      }
      return upsertCaseCollection(collections, distinct);
    },

    latestApiUsage: () => latestApiUsage,
  };
  return client;
}
