import { isObject, parseJsonOrUndefined } from '../../json.ts';

/** One entry of a Salesforce REST error answer. */
export interface SalesforceError {
  message: string;
  errorCode: string;
}

/**
 * Reads a Salesforce REST error body `[{"message", "errorCode", "fields"}]` (a lone object too).
 * Anything else (HTML from a proxy, a 300's list of record URLs, nothing) gives an empty list.
 *
 * @example
 * salesforceErrors('[{"message":"Bad","errorCode":"INVALID_FIELD","fields":[]}]');
 * // [{ message: 'Bad', errorCode: 'INVALID_FIELD' }]
 */
export function salesforceErrors(text: string): SalesforceError[] {
  const body = parseJsonOrUndefined(text);
  if (body === undefined) return [];
  const entries = Array.isArray(body) ? body : [body];
  return entries.filter(isObject).flatMap((entry) => {
    const message = typeof entry.message === 'string' ? entry.message : '';
    const errorCode = typeof entry.errorCode === 'string' ? entry.errorCode : '';
    return message || errorCode ? [{ message, errorCode }] : [];
  });
}

/**
 * The body's `id`, if it is a Salesforce upsert answer `{"id": "500…", "success": true, …}`.
 *
 * @example
 * recordId('{"id":"500xx000001","success":true,"errors":[],"created":true}'); // '500xx000001'
 */
export function recordId(text: string): string | undefined {
  const body = parseJsonOrUndefined(text);
  return isObject(body) && typeof body.id === 'string' && body.id ? body.id : undefined;
}
