import { tracedFetch } from '../../observability/tracing.ts';
import { personalValuesOf } from '../../privacy/fieldClassification.ts';
import { describeFetchError } from '../fetchError.ts';
import { type DeliveryOutcome, distinctItems, singleCall } from '../types.ts';
import { deliverRegistrationBatch } from './batch.ts';
import { DEFAULT_ERP_BATCH_SIZE, DEFAULT_ERP_TIMEOUT_MS } from './constants.ts';
import { cookieHeader, storeCookies } from './cookies.ts';
import { createCsrfSessions } from './csrfSessions.ts';
import { basicAuthorization, erpEndpoints } from './endpoints.ts';
import { classifyErpAnswer, isCsrfRequired, isOwnRepeat, repeatedDocumentNumber } from './response.ts';
import type { CsrfSession, ErpClient, ErpConfig, PostAnswer } from './types.ts';

/**
 * Creates the SAP Gateway adapter for sales registrations (docs/behaviour.md#sap-protocol). Create it once per
 * process: it keeps the CSRF token and session cookies and reuses them until the ERP refuses them.
 * Never throws per record: every result is a {@link DeliveryOutcome}; several registrations go in one `$batch`
 * call of at most `callSize` (ERP_BATCH_SIZE): the worker slices a batch into calls and asks the hold before each.
 *
 * @example
 * const erp = createErpClient(erpConfigFromEnv());
 * const outcome = await erp.deliverSalesRegistration(record, 'c0ffee-…');
 * if (outcome.kind === 'delivered') console.log(outcome.downstreamId); // '49000001'
 */
export function createErpClient(config: ErpConfig): ErpClient {
  const timeoutMs = config.timeoutMs ?? DEFAULT_ERP_TIMEOUT_MS;
  const { entitySet, serviceRoot, batch, entitySetName } = erpEndpoints(config);
  const authorization = basicAuthorization(config.username, config.password);

  const sessions = createCsrfSessions(serviceRoot, authorization, timeoutMs);
  const batchSize = config.batchSize ?? DEFAULT_ERP_BATCH_SIZE;
  const batchContext = { batchUrl: batch, entitySetName, authorization, sessions, timeoutMs };

  const post = async (session: CsrfSession, body: string): Promise<PostAnswer> => {
    try {
      const response = await tracedFetch('SAP POST', entitySet, {
        method: 'POST',
        headers: {
          Authorization: authorization,
          'X-CSRF-Token': session.token,
          Cookie: cookieHeader(session.cookies),
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body,
        // A redirected POST would be replayed as a GET or re-sent blindly; classify the 3xx instead.
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      // SAP may refresh the session cookie on any answer.
      storeCookies(response.headers, session.cookies);
      // The status is known: a body cut off by the timeout or the network only loses the details.
      const text = await response.text().catch(() => '');
      return { kind: 'answered', status: response.status, headers: response.headers, text };
    } catch (error) {
      const { timedOut, text } = describeFetchError(error, timeoutMs);
      return timedOut ? { kind: 'timedOut', error: text } : { kind: 'networkError', error: text };
    }
  };

  const client: ErpClient = {
    async deliverSalesRegistration(record, registrationId): Promise<DeliveryOutcome> {
      const body = JSON.stringify({ ...record, RegistrationId: registrationId });
      const first = await sessions.current();
      if (!first.ok) return { kind: 'transient', error: first.error, reachedDownstream: false };

      let answer = await post(first.session, body);
      let refusedOnce = false;
      if (answer.kind === 'answered' && isCsrfRequired(answer.status, answer.headers)) {
        refusedOnce = true;
        // The token expired (session timeout, ERP restart): one new token, one repeat. The refused POST
        // did reach the ERP, so every outcome from here on has reachedDownstream true.
        const renewed = await sessions.renew(first.session);
        if (!renewed.ok) {
          return { kind: 'transient', error: `${renewed.error} (token refused)`, reachedDownstream: true };
        }
        answer = await post(renewed.session, body);
        if (answer.kind === 'answered' && isCsrfRequired(answer.status, answer.headers)) {
          // No loop: a fresh token refused at once is an ERP-side problem; retry with backoff later.
          return {
            kind: 'transient',
            error: 'HTTP 403: CSRF token refused again right after a new one was fetched',
            reachedDownstream: true,
          };
        }
      }

      switch (answer.kind) {
        case 'answered':
          if (isOwnRepeat(answer.status, answer.text, registrationId)) {
            const downstreamId = repeatedDocumentNumber(answer.text);
            return {
              kind: 'delivered',
              status: answer.status,
              reachedDownstream: true,
              ...(downstreamId ? { downstreamId } : {}),
            };
          }
          return classifyErpAnswer(answer.status, answer.text, personalValuesOf('salesRegistration', record));
        case 'timedOut':
          // The ERP may have processed it; the status record counts it as an attempt.
          return { kind: 'transient', error: answer.error, reachedDownstream: true };
        case 'networkError':
          // Not answered, so not an attempt: unless the refused first POST already was one.
          return { kind: 'transient', error: answer.error, reachedDownstream: refusedOnce };
      }
    },

    callSize: batchSize,

    async deliverSalesRegistrations(items) {
      // One change set per registration: a record listed twice (two queue messages of one record) goes once.
      const distinct = distinctItems(items, batchSize);
      if (distinct.length === 1) {
        const [{ id, record }] = distinct;
        return singleCall(id, await client.deliverSalesRegistration(record, id));
      }
      return deliverRegistrationBatch(batchContext, distinct);
    },
  };
  return client;
}
