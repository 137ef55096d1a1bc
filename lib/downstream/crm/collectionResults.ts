import { isObject, parseJsonOrUndefined } from '../../json.ts';
import type { PersonalValue } from '../../privacy/redaction.ts';
import type { DeliveryOutcome } from '../types.ts';
import { classifyCrmAnswer } from './response.ts';

/**
 * The status a single upsert answers with the same error code. A Collections result carries only the code, and
 * a code decides its case as the single upsert's answer would (docs/behaviour.md#salesforce-protocol): most are
 * refusals of the record (400, permanent) or a locked row (400 `UNABLE_TO_LOCK_ROW`, transient); these say
 * "not now".
 */
const SINGLE_CALL_STATUS: Readonly<Record<string, number>> = {
  INVALID_SESSION_ID: 401,
  REQUEST_LIMIT_EXCEEDED: 403,
  UNKNOWN_EXCEPTION: 500,
  SERVER_UNAVAILABLE: 503,
};

/** One record's result of a Collections upsert, read into the decision it makes. */
const decideResult = (result: unknown, personalValues: readonly PersonalValue[]): DeliveryOutcome => {
  if (!isObject(result) || typeof result.success !== 'boolean') {
    return {
      kind: 'transient',
      error: 'Collections answer: a result is not readable',
      reachedDownstream: true,
    };
  }
  if (result.success) {
    const id = typeof result.id === 'string' && result.id ? result.id : undefined;
    return { kind: 'delivered', reachedDownstream: true, ...(id ? { downstreamId: id } : {}) };
  }
  const errors = (Array.isArray(result.errors) ? result.errors : []).filter(isObject).map((error) => ({
    errorCode: typeof error.statusCode === 'string' ? error.statusCode : '',
    message: typeof error.message === 'string' ? error.message : '',
  }));
  const codes = errors.filter(({ errorCode, message }) => errorCode || message);
  if (codes.length === 0) {
    // A refusal without a reason is no reason to reject the case.
    return {
      kind: 'transient',
      error: 'Collections answer: a failed result names no error',
      reachedDownstream: true,
    };
  }
  const status = codes.map(({ errorCode }) => SINGLE_CALL_STATUS[errorCode]).find(Boolean) ?? 400;
  return classifyCrmAnswer(status, JSON.stringify(codes), personalValues);
};

/** A Collections answer read result by result, or why it cannot be matched to its records. */
export type CollectionAnswer = { ok: true; outcomes: DeliveryOutcome[] } | { ok: false; error: string };

/**
 * Reads the `200` answer to a Collections upsert of `personalValues.length` records: one result
 * `{id, success, created, errors: [{statusCode, message, fields}]}` per record, in order, each deciding its case
 * as a single upsert would. Only positions tie a result to its record, so an answer that is not such an array,
 * or has more or fewer results than records, is not read at all (`ok: false`): the caller keeps every case
 * transient. An unreadable single result makes only its own case transient.
 *
 * @param personalValues each record's personal values, in request order, blanked out of its error text.
 * @example
 * readCollectionAnswer('[{"id":"500…","success":true,"created":true,"errors":[]}]', [[]]);
 * // { ok: true, outcomes: [{ kind: 'delivered', downstreamId: '500…', reachedDownstream: true }] }
 */
export function readCollectionAnswer(
  text: string,
  personalValues: readonly (readonly PersonalValue[])[],
): CollectionAnswer {
  const results = parseJsonOrUndefined(text);
  if (!Array.isArray(results)) return { ok: false, error: 'the answer is not an array of results' };
  if (results.length !== personalValues.length) {
    return {
      ok: false,
      error: `the answer has ${results.length} results for ${personalValues.length} records`,
    };
  }
  return { ok: true, outcomes: results.map((result, index) => decideResult(result, personalValues[index])) };
}
