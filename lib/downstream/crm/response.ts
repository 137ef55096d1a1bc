import { type PersonalValue, safeErrorText } from '../../privacy/redaction.ts';
import type { DeliveryOutcome } from '../types.ts';
import { recordId, salesforceErrors } from './salesforceErrors.ts';

/** Statuses that say "not now" rather than "not this record" (docs/behaviour.md#salesforce-protocol). */
const isTransientStatus = (status: number): boolean =>
  status === 401 || // other than INVALID_SESSION_ID (handled before this point), or that one twice
  status === 403 || // REQUEST_LIMIT_EXCEEDED and every other 403
  status === 408 ||
  status === 429 ||
  status >= 500 ||
  // 301, 302, 307 …: a moved instance or a login page, a matter of configuration, not of the record.
  // 300 is the exception: it means the external id matches several Cases, which is permanent.
  (status < 400 && status !== 300);

/**
 * Error codes that make a 400 transient. Salesforce answers a row lock held by another transaction (a trigger,
 * a bulk job, a concurrent upsert of the same case) with 400 `UNABLE_TO_LOCK_ROW`, yet the same request succeeds
 * once the lock is released: the record is retried, not rejected (docs/behaviour.md#salesforce-protocol). One such
 * entry is enough: the lock stopped the upsert before anything else in it could be judged final.
 */
const TRANSIENT_400_CODES = new Set(['UNABLE_TO_LOCK_ROW']);

/**
 * Classifies Salesforce's answer to an upsert (docs/behaviour.md#salesforce-protocol).
 * `personalValues` are blanked out of the error text in any form Salesforce may echo them (see safeErrorText).
 *
 * - any 2xx: delivered (a malformed body too: the case exists, repeating the upsert is harmless anyway);
 * - 401, 403, 408, 429, 5xx, redirects, and a 400 with errorCode `UNABLE_TO_LOCK_ROW`: transient, text
 *   `HTTP <status>: <errorCode>: <message>`;
 * - 300 and every other 4xx (400, 404 named by the contract; 405, 409, 415 … too): permanent, because the
 *   same request would get the same answer; the text is the messages joined by "; ".
 *
 * @example
 * classifyCrmAnswer(400, '[{"message":"Bad value","errorCode":"INVALID_FIELD","fields":[]}]', []);
 * // { kind: 'permanent', error: 'Bad value', reachedDownstream: true }
 * classifyCrmAnswer(400, '[{"message":"unable to obtain exclusive access to this record","errorCode":"UNABLE_TO_LOCK_ROW"}]', []);
 * // { kind: 'transient', error: 'HTTP 400: UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record',
 * //   reachedDownstream: true }
 */
export function classifyCrmAnswer(
  status: number,
  text: string,
  personalValues: readonly PersonalValue[],
): DeliveryOutcome {
  if (status >= 200 && status < 300) {
    const downstreamId = recordId(text);
    return { kind: 'delivered', status, reachedDownstream: true, ...(downstreamId ? { downstreamId } : {}) };
  }
  const errors = salesforceErrors(text);
  const lockedRow = status === 400 && errors.some(({ errorCode }) => TRANSIENT_400_CODES.has(errorCode));
  if (isTransientStatus(status) || lockedRow) {
    const details = errors.map(({ errorCode, message }) => [errorCode, message].filter(Boolean).join(': '));
    const error = details.length > 0 ? `HTTP ${status}: ${details.join('; ')}` : `HTTP ${status}`;
    return { kind: 'transient', error: safeErrorText(error, personalValues), reachedDownstream: true };
  }
  const messages = errors.map(({ message, errorCode }) => message || errorCode);
  const fallback = status === 300 ? 'HTTP 300: the external id matches more than one Case' : `HTTP ${status}`;
  const error = messages.length > 0 ? messages.join('; ') : fallback;
  return { kind: 'permanent', error: safeErrorText(error, personalValues), reachedDownstream: true };
}

/**
 * True for Salesforce's "this access token is not (or no longer) valid" answer.
 *
 * @example
 * isInvalidSession(401, '[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]'); // true
 */
export function isInvalidSession(status: number, text: string): boolean {
  return status === 401 && salesforceErrors(text).some((error) => error.errorCode === 'INVALID_SESSION_ID');
}
