import { isObject, parseJsonOrUndefined } from '../../json.ts';
import { tracedFetch } from '../../observability/tracing.ts';
import { personalValuesOf } from '../../privacy/fieldClassification.ts';
import { type PersonalValue, safeErrorText } from '../../privacy/redaction.ts';
import type { SalesRegistration } from '../../types.ts';
import { describeFetchError } from '../fetchError.ts';
import { type BatchItem, type CallOutcome, type DeliveryOutcome, wholeCallFailure } from '../types.ts';
import { type ChangeSetAnswer, readBatchAnswer } from './batchAnswer.ts';
import { type BatchRequest, buildBatchRequest } from './batchRequest.ts';
import { cookieHeader, storeCookies } from './cookies.ts';
import type { CsrfSessions } from './csrfSessions.ts';
import {
  classifyErpAnswer,
  isCsrfRequired,
  isOwnRepeat,
  odataErrorMessage,
  repeatedDocumentNumber,
} from './response.ts';
import type { CsrfSession } from './types.ts';

/** What a `$batch` call needs from the adapter that makes it. */
export interface ErpBatchContext {
  /** `{service root}$batch`, with `sap-client` when set. */
  batchUrl: URL;
  /** Last segment of the service path: the relative URL of each change set's POST. */
  entitySetName: string;
  authorization: string;
  /** Shared with the single POSTs: one token and cookie jar per process. */
  sessions: CsrfSessions;
  timeoutMs: number;
}

/** What came back from one `$batch` POST, before it is read. */
type BatchCallAnswer =
  | { kind: 'answered'; status: number; headers: Headers; body: Uint8Array }
  | { kind: 'timedOut'; error: string }
  | { kind: 'networkError'; error: string };

const postBatch = async (
  context: ErpBatchContext,
  session: CsrfSession,
  request: BatchRequest,
): Promise<BatchCallAnswer> => {
  try {
    const response = await tracedFetch('SAP $batch', context.batchUrl, {
      method: 'POST',
      headers: {
        Authorization: context.authorization,
        'X-CSRF-Token': session.token,
        Cookie: cookieHeader(session.cookies),
        'Content-Type': request.contentType,
        Accept: 'multipart/mixed',
      },
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(context.timeoutMs),
    });
    storeCookies(response.headers, session.cookies);
    // A body cut off by the network or the timeout stays cut off: the parser then refuses it as a whole.
    const body = new Uint8Array(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
    return { kind: 'answered', status: response.status, headers: response.headers, body };
  } catch (error) {
    const { timedOut, text } = describeFetchError(error, context.timeoutMs);
    return timedOut ? { kind: 'timedOut', error: text } : { kind: 'networkError', error: text };
  }
};

/** `d.RegistrationId` of a created entity, when the ERP echoes it. */
const echoedRegistrationId = (text: string): string | undefined => {
  const body = parseJsonOrUndefined(text);
  const id = isObject(body) && isObject(body.d) ? body.d.RegistrationId : undefined;
  return typeof id === 'string' ? id : undefined;
};

/** One change set's part decides its registration exactly as a single POST's answer would. */
const decideChangeSet = (answer: ChangeSetAnswer, item: BatchItem<SalesRegistration>): DeliveryOutcome => {
  if (answer.kind === 'malformed') {
    return { kind: 'transient', error: `$batch answer: ${answer.error}`, reachedDownstream: true };
  }
  if (isOwnRepeat(answer.status, answer.text, item.id)) {
    // An earlier call whose answer was lost stored it: the 409 names its document number, as for a single POST.
    const downstreamId = repeatedDocumentNumber(answer.text);
    return {
      kind: 'delivered',
      status: answer.status,
      reachedDownstream: true,
      ...(downstreamId ? { downstreamId } : {}),
    };
  }
  const outcome = classifyErpAnswer(
    answer.status,
    answer.text,
    personalValuesOf('salesRegistration', item.record),
  );
  const echoed = outcome.kind === 'delivered' ? echoedRegistrationId(answer.text) : undefined;
  if (echoed !== undefined && echoed !== item.id) {
    // A success that names another registration is out of place: nothing says this one was stored.
    return {
      kind: 'transient',
      error: '$batch answer: the change set answer names another RegistrationId',
      reachedDownstream: true,
    };
  }
  return outcome;
};

const everyRecord = (
  items: readonly BatchItem<SalesRegistration>[],
  failure: { error: string; reachedDownstream: boolean },
): CallOutcome =>
  wholeCallFailure(
    items.map(({ id }) => id),
    { kind: 'transient', ...failure },
  );

/** A refusal of the whole request judges no single registration: transient for all, never permanent. */
const wholeCallRefused = (status: number, text: string, personalValues: readonly PersonalValue[]): string => {
  const message = odataErrorMessage(text);
  return safeErrorText(`HTTP ${status} to the whole $batch${message ? `: ${message}` : ''}`, personalValues);
};

/**
 * Delivers registrations in one OData `$batch` call, one change set each (docs/behaviour.md#batching): same CSRF
 * token, cookies and Basic authentication as the single POST; a
 * `403 X-CSRF-Token: Required` fetches a new token once and repeats the whole call.
 *
 * Each change set's part decides its registration as a single POST's answer would (a `409` naming our
 * RegistrationId included: an earlier call whose answer was lost stored it). A failure of the whole call
 * (network, timeout, any non-2xx status, the token refused twice) is transient for every registration, and so
 * is an answer that cannot be matched to its change sets part by part: nothing is marked delivered by guess. Such a
 * call's outcome says so (`failedWhole`, each record's outcome marked `wholeCall`).
 * `items` must have distinct ids (the client's deliverSalesRegistrations sees to it). Never throws.
 *
 * @example
 * const { outcomes } = await deliverRegistrationBatch(context, [{ id: 'r1', record: a }, { id: 'r2', record: b }]);
 * outcomes.get('r1'); // { kind: 'delivered', downstreamId: '49000001', reachedDownstream: true }
 */
export async function deliverRegistrationBatch(
  context: ErpBatchContext,
  items: readonly BatchItem<SalesRegistration>[],
): Promise<CallOutcome> {
  const request = buildBatchRequest(
    context.entitySetName,
    items.map(({ id, record }) => JSON.stringify({ ...record, RegistrationId: id })),
  );
  const first = await context.sessions.current();
  if (!first.ok) return everyRecord(items, { error: first.error, reachedDownstream: false });

  let answer = await postBatch(context, first.session, request);
  let refusedOnce = false;
  if (answer.kind === 'answered' && isCsrfRequired(answer.status, answer.headers)) {
    // The refused call reached the ERP: every outcome from here on has reachedDownstream true.
    refusedOnce = true;
    const renewed = await context.sessions.renew(first.session);
    if (!renewed.ok) {
      return everyRecord(items, { error: `${renewed.error} (token refused)`, reachedDownstream: true });
    }
    answer = await postBatch(context, renewed.session, request);
    if (answer.kind === 'answered' && isCsrfRequired(answer.status, answer.headers)) {
      return everyRecord(items, {
        error: 'HTTP 403: CSRF token refused again right after a new one was fetched',
        reachedDownstream: true,
      });
    }
  }

  switch (answer.kind) {
    case 'timedOut':
      // The ERP may have processed some or all change sets; a repeat meets 409 naming our RegistrationId.
      return everyRecord(items, { error: answer.error, reachedDownstream: true });
    case 'networkError':
      return everyRecord(items, { error: answer.error, reachedDownstream: refusedOnce });
    case 'answered':
      break;
  }
  if (answer.status < 200 || answer.status >= 300) {
    const text = new TextDecoder().decode(answer.body);
    const personalValues = items.flatMap(({ record }) => personalValuesOf('salesRegistration', record));
    return everyRecord(items, {
      error: wholeCallRefused(answer.status, text, personalValues),
      reachedDownstream: true,
    });
  }
  const read = await readBatchAnswer(answer.headers.get('content-type'), answer.body, items.length);
  if (!read.ok) {
    return everyRecord(items, {
      error: `HTTP ${answer.status} to the $batch, but ${read.error}`,
      reachedDownstream: true,
    });
  }
  return {
    outcomes: new Map(items.map((item, index) => [item.id, decideChangeSet(read.changeSets[index], item)])),
  };
}
