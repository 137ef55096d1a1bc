import { personalValuesOf } from '../../privacy/fieldClassification.ts';
import { type PersonalValue, safeErrorText } from '../../privacy/redaction.ts';
import type { CaseRecord } from '../../types.ts';
import {
  type BatchItem,
  type CallOutcome,
  type DeliveryOutcome,
  type TransientOutcome,
  wholeCallFailure,
} from '../types.ts';
import type { ApiUsage } from './apiUsage.ts';
import { readCollectionAnswer } from './collectionResults.ts';
import { mapCase } from './mapping.ts';
import { patchJson } from './patchJson.ts';
import { isInvalidSession } from './response.ts';
import { salesforceErrors } from './salesforceErrors.ts';
import type { TokenCache } from './tokenCache.ts';
import type { AccessToken, CaseMapping, PatchAnswer } from './types.ts';

/** Salesforce takes at most this many records in one sObject Collections call. */
export const MAX_COLLECTION_SIZE = 200;

/** What a Collections call needs from the adapter that makes it. */
export interface CollectionsContext {
  /** Shared with the single upserts: one token per process. */
  tokens: TokenCache;
  apiVersion: string;
  externalIdField: string;
  mapping: CaseMapping;
  timeoutMs: number;
  /** Told every API usage an answer reports (the adapter keeps the latest). */
  onApiUsage(usage: ApiUsage): void;
}

/**
 * Upserts cases by external id in one sObject Collections call (docs/behaviour.md#batching):
 * `PATCH …/composite/sobjects/Case/<external id field>` with `allOrNone: false`, so each case stands on
 * its own. A `401 INVALID_SESSION_ID` gets a new token once and repeats the call.
 *
 * Each result decides its case as a single upsert would (its `statusCode` read like an `errorCode`:
 * `UNABLE_TO_LOCK_ROW` transient, `INVALID_EMAIL_ADDRESS` permanent). A failure of the whole call (network,
 * timeout, any status but 2xx, the token refused twice) is transient for every case, and so is an answer whose
 * results cannot be matched to the records one by one: nothing is marked delivered by guess; such a call's outcome
 * says so (`failedWhole`, each case's outcome marked `wholeCall`). The upsert by
 * external id makes a repeat after a lost answer update the same case. At most {@link MAX_COLLECTION_SIZE}
 * distinct ids (the client's upsertCases sees to it). Never throws.
 *
 * @example
 * const { outcomes, apiUsage } = await upsertCaseCollection(context, [{ id: 'c1', record: a }, { id: 'c2', record: b }]);
 * outcomes.get('c1'); // { kind: 'delivered', downstreamId: '500…', reachedDownstream: true }
 * apiUsage; // { used: 2, allowed: 115000 }
 */
export async function upsertCaseCollection(
  context: CollectionsContext,
  items: readonly BatchItem<CaseRecord>[],
): Promise<CallOutcome> {
  let apiUsage: ApiUsage | undefined;
  const body = JSON.stringify({
    allOrNone: false,
    records: items.map(({ id, record }) => ({
      attributes: { type: 'Case' },
      [context.externalIdField]: id,
      ...mapCase(record, context.mapping),
    })),
  });
  const personalValues = items.map(({ record }) => personalValuesOf('caseRecord', record));

  const call = async (token: AccessToken): Promise<PatchAnswer> => {
    const url =
      `${token.instanceUrl}/services/data/${context.apiVersion}/composite/sobjects/Case/` +
      encodeURIComponent(context.externalIdField);
    const { answer, usage } = await patchJson(url, token, body, context.timeoutMs);
    if (usage) {
      apiUsage = usage;
      context.onApiUsage(usage);
    }
    return answer;
  };

  const every = (failure: Omit<TransientOutcome, 'wholeCall'>): CallOutcome =>
    wholeCallFailure(
      items.map(({ id }) => id),
      failure,
      apiUsage,
    );

  const first = await context.tokens.current();
  if (!first.ok) return every({ kind: 'transient', error: first.error, reachedDownstream: false });
  let answer = await call(first.token);
  let refusedOnce = false;
  if (answer.kind === 'answered' && isInvalidSession(answer.status, answer.text)) {
    // The refused call reached Salesforce: every outcome from here on has reachedDownstream true.
    refusedOnce = true;
    const renewed = await context.tokens.renew(first.token);
    if (!renewed.ok) {
      return every({ kind: 'transient', error: `${renewed.error} (token refused)`, reachedDownstream: true });
    }
    answer = await call(renewed.token);
    if (answer.kind === 'answered' && isInvalidSession(answer.status, answer.text)) {
      return every({
        kind: 'transient',
        error: 'HTTP 401: INVALID_SESSION_ID again right after a new token was issued',
        reachedDownstream: true,
      });
    }
  }

  switch (answer.kind) {
    case 'timedOut':
      // Salesforce may have upserted some or all; a repeat by external id updates the same cases.
      return every({ kind: 'transient', error: answer.error, reachedDownstream: true });
    case 'networkError':
      return every({ kind: 'transient', error: answer.error, reachedDownstream: refusedOnce });
    case 'answered':
      break;
  }
  if (answer.status < 200 || answer.status >= 300) {
    return every({
      kind: 'transient',
      error: wholeCallRefused(answer.status, answer.text, personalValues.flat()),
      reachedDownstream: true,
    });
  }
  const read = readCollectionAnswer(answer.text, personalValues);
  if (!read.ok) {
    return every({
      kind: 'transient',
      error: `HTTP ${answer.status} to the Collections call, but ${read.error}`,
      reachedDownstream: true,
    });
  }
  // A result carries no status of its own: a delivered case keeps the status of the call that carried it.
  const status = answer.status;
  const withStatus = (outcome: DeliveryOutcome): DeliveryOutcome =>
    outcome.kind === 'delivered' ? { ...outcome, status } : outcome;
  return {
    outcomes: new Map(items.map(({ id }, index) => [id, withStatus(read.outcomes[index])])),
    ...(apiUsage ? { apiUsage } : {}),
  };
}

/** A refusal of the whole call judges no single case: transient for all, never permanent. */
const wholeCallRefused = (status: number, text: string, personalValues: readonly PersonalValue[]): string => {
  const details = salesforceErrors(text).map(({ errorCode, message }) =>
    [errorCode, message].filter(Boolean).join(': '),
  );
  const error = `HTTP ${status} to the whole Collections call${details.length > 0 ? `: ${details.join('; ')}` : ''}`;
  return safeErrorText(error, personalValues);
};
