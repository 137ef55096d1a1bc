import { isObject, parseJsonOrUndefined } from '../../json.ts';
import { type PersonalValue, safeErrorText } from '../../privacy/redaction.ts';
import type { DeliveryOutcome } from '../types.ts';

/**
 * The message of an OData v2 error body `{"error":{"code":…,"message":{"lang":…,"value":…}}}`.
 * Older gateways send `message` as a plain string; both are read.
 *
 * @example
 * odataErrorMessage('{"error":{"code":"X","message":{"lang":"en","value":"Frame unknown"}}}'); // 'Frame unknown'
 */
export function odataErrorMessage(text: string): string | undefined {
  const body = parseJsonOrUndefined(text);
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const message = body.error.message;
  const value = isObject(message) ? message.value : message;
  return typeof value === 'string' && value.trim() ? value : undefined;
}

/**
 * `d.DocumentNumber` of an OData v2 entity answer, if the body has one.
 *
 * @example
 * documentNumber('{"d":{"DocumentNumber":"49000001"}}'); // '49000001'
 */
export function documentNumber(text: string): string | undefined {
  const body = parseJsonOrUndefined(text);
  if (!isObject(body) || !isObject(body.d)) return undefined;
  const value = body.d.DocumentNumber;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** Statuses that say "not now" rather than "not this record" (docs/behaviour.md#sap-protocol). */
const isTransientStatus = (status: number): boolean =>
  status === 401 || // credentials may be rotating
  status === 403 || // a 403 without `X-CSRF-Token: Required` (that case is handled before this point)
  status === 408 ||
  status === 429 ||
  status >= 500 ||
  // 3xx: the delivery URL redirects (a login page, a moved host): configuration, not the record,
  // so the record waits for a fix instead of being rejected. 1xx never surfaces from fetch.
  status < 400;

/**
 * Classifies the ERP's answer to a delivery POST (docs/behaviour.md#sap-protocol).
 * `personalValues` are blanked out of the error text.
 *
 * - any 2xx: delivered (a malformed body too: the ERP has the record, repeating would duplicate it);
 * - 401, 403, 408, 429, 5xx, 3xx: transient;
 * - every other 4xx (400, 404, 409, 422 named by the contract; 405, 410, 413, 415 … too): permanent,
 *   because the same request would get the same answer; the text is `error.message.value`.
 *
 * @example
 * classifyErpAnswer(409, '{"error":{"message":{"value":"already registered"}}}', []);
 * // { kind: 'permanent', error: 'already registered', reachedDownstream: true }
 */
export function classifyErpAnswer(
  status: number,
  text: string,
  personalValues: readonly PersonalValue[],
): DeliveryOutcome {
  if (status >= 200 && status < 300) {
    const downstreamId = documentNumber(text);
    return { kind: 'delivered', status, reachedDownstream: true, ...(downstreamId ? { downstreamId } : {}) };
  }
  const message = odataErrorMessage(text);
  if (isTransientStatus(status)) {
    const error = message ? `HTTP ${status}: ${message}` : `HTTP ${status}`;
    return { kind: 'transient', error: safeErrorText(error, personalValues), reachedDownstream: true };
  }
  return {
    kind: 'permanent',
    error: safeErrorText(message ?? `HTTP ${status}`, personalValues),
    reachedDownstream: true,
  };
}

/**
 * True when the ERP refused a POST as a repeat of our own: 409 naming this very `RegistrationId`. Our earlier
 * request got through and only its answer was lost (a worker died between the ERP's answer and the status
 * write), so the registration exists once and the record is delivered. Any other refusal is a refusal.
 *
 * @example
 * isOwnRepeat(409, '{"error":{"message":{"value":"RegistrationId 9b1f… already registered"}}}', '9b1f…'); // true
 */
export function isOwnRepeat(status: number, text: string, registrationId: string): boolean {
  return (
    status === 409 && registrationId.length > 0 && (odataErrorMessage(text) ?? '').includes(registrationId)
  );
}

/**
 * The document number an own-repeat 409 names (`… already registered as document 49000001`), if any: the
 * registration our lost request created, so the record keeps the `downstreamId` a 201 would have given it.
 *
 * @example
 * repeatedDocumentNumber('{"error":{"message":{"value":"RegistrationId 9b1f… already registered as document 49000001"}}}');
 * // '49000001'
 */
export function repeatedDocumentNumber(text: string): string | undefined {
  return /\bdocument(?: number)? (\d+)\b/i.exec(odataErrorMessage(text) ?? '')?.[1];
}

/**
 * True for SAP's "your CSRF token is not (or no longer) valid" answer.
 *
 * @example
 * isCsrfRequired(403, new Headers({ 'x-csrf-token': 'Required' })); // true
 */
export function isCsrfRequired(status: number, headers: Headers): boolean {
  return status === 403 && headers.get('x-csrf-token')?.trim().toLowerCase() === 'required';
}
