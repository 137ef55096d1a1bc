import { inParallel } from '../concurrency/bounded.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import { frameKeyOf, openKindOf, statusKeyOf } from '../records/keys.ts';
import type { StatusRecord } from '../records/types.ts';
import { queueUrlFor, reconcileSettings } from '../settings/settings.ts';
import type { CallOptions } from '../store/statusRecords.ts';
import { putStatusRecordIfAbsent } from '../store/statusRecords.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';
import { acceptContent } from './acceptContent.ts';
import { contentIdKey } from './contentIdKey.ts';
import { isAwsUnavailable, QueueUnavailableError } from './errors.ts';
import { holdIdempotencyKey } from './idempotencyHold.ts';
import { nameKeyedRecord } from './nameKeyedRecord.ts';
import { contentId, keyedId, legacyContentId, sha256 } from './recordIds.ts';

export interface AcceptRequest {
  kind: RecordKind;
  records: (SalesRegistration | CaseRecord)[];
  requestId: string;
  /** The calling client's name: records, duplicates and idempotency keys are per owner. */
  owner: string;
  /** A test client's request: its records are test records (docs/API.md, "Test mode"). */
  test?: boolean;
  idempotencyKey?: string;
  now?: Date;
  /** The request's deadline: every AWS call stops when it aborts, and the caller is answered 503. */
  abortSignal?: AbortSignal;
}

/** Conditional writes in flight at once for a large request. */
const PARALLEL_WRITES = 16;

/**
 * A new `accepted` status record. It is in the `open` index from the start, due for the reconciler a few minutes
 * on: if this request dies before its message is sent, the reconciler queues the record; a worker that receives
 * the message first pushes `dueAt` on. A sales record also carries its `frameKey` (the sparse `frame` index, for
 * look-ups by frame number) and its dealer; every record its `statusKey` (the `status` index, for operations).
 */
export const newStatusRecord = (
  id: string,
  request: AcceptRequest,
  record: SalesRegistration | CaseRecord,
  now: Date,
): StatusRecord => ({
  id,
  kind: request.kind,
  status: 'accepted',
  attempts: 0,
  acceptedAt: now.toISOString(),
  updatedAt: now.toISOString(),
  requestId: request.requestId,
  owner: request.owner,
  ...(request.test ? { test: true as const } : {}),
  record,
  statusKey: statusKeyOf(request.kind, 'accepted'),
  // A test record waits apart from the live ones: a held downstream's probe never reads it.
  openKind: openKindOf(request.kind, request.test),
  dueAt: dueAfter(now, reconcileSettings().reconcileAfterSeconds),
  ...(request.kind === 'salesRegistration'
    ? {
        frameKey: frameKeyOf(request.owner, (record as SalesRegistration).FrameNum),
        dealer: (record as SalesRegistration).DealerId,
      }
    : {}),
});

/** Content id → record, each distinct content once, in request order. */
const distinctContents = (request: AcceptRequest, contentIds: string[]) => {
  const contents = new Map<string, SalesRegistration | CaseRecord>();
  for (const [i, id] of contentIds.entries()) if (!contents.has(id)) contents.set(id, request.records[i]);
  return contents;
};

/** Sends the messages of the records this request created; any it could not send fail the request with 503. */
const queueCreated = async (kind: RecordKind, created: StatusRecord[], options: CallOptions) => {
  if (created.length === 0) return;
  const failedIds = await sendRecords(queueUrlFor(kind), created.map(queuedRecordOf), options);
  // Stored but not queued: the reconciler queues them; the caller's retry finds them and is answered 200.
  if (failedIds.length > 0)
    throw new QueueUnavailableError(`${failedIds.length} record(s) could not be queued`);
};

/** Each record's content id (keyed), and the one it had before content ids were keyed, in request order. */
interface ContentIds {
  contentIds: string[];
  legacyIds: string[];
}

/** Without a key: the content decides. Equal content within 24 hours is the same record. */
const acceptByContent = async (request: AcceptRequest, ids: ContentIds, now: Date, options: CallOptions) => {
  const { contentIds } = ids;
  const legacyOf = new Map(contentIds.map((id, i) => [id, ids.legacyIds[i]]));
  const contents = [...distinctContents(request, contentIds)];
  const outcomes = await inParallel(contents, PARALLEL_WRITES, ([firstId, record]) =>
    acceptContent({
      firstId,
      legacyFirstId: legacyOf.get(firstId),
      record,
      now,
      options,
      fresh: (id) => newStatusRecord(id, request, record, now),
    }),
  );
  const idOf = new Map(contents.map(([firstId], i) => [firstId, outcomes[i].id]));
  await queueCreated(
    request.kind,
    outcomes.flatMap((outcome) => (outcome.created ? [outcome.created] : [])),
    options,
  );
  return contentIds.map((firstId) => idOf.get(firstId) as string);
};

/**
 * With an `Idempotency-Key`: the key decides. The request that holds the key creates the records (ids derived
 * from key and content, so a retry names the same ones); a repeat with the same body is answered the same ids.
 */
const acceptByKey = async (
  request: AcceptRequest,
  key: string,
  firstIds: ContentIds,
  now: Date,
  options: CallOptions,
) => {
  const keyHash = sha256(`${request.owner}\n${key}`);
  const hold = await holdIdempotencyKey({
    kind: request.kind,
    keyHash,
    records: request.records,
    now,
    options,
  });
  // A key first used before content ids were keyed keeps the ids its first request gave (and made).
  const contentIds = hold.legacyIds ? firstIds.legacyIds : firstIds.contentIds;
  const ids = contentIds.map((id) => keyedId(keyHash, id));
  if (hold.answered) return ids;
  try {
    const contents = [...distinctContents(request, contentIds)];
    const created = await inParallel(contents, PARALLEL_WRITES, async ([id, record]) => {
      const status = newStatusRecord(keyedId(keyHash, id), request, record, now);
      // Named first, written second: the same content sent without a key from now on is this record (the
      // contract's 24-hour rule), even while this request is still on its way to writing it.
      await nameKeyedRecord(
        { id, aliasOf: status.id, kind: request.kind, owner: request.owner, acceptedAt: status.acceptedAt },
        options,
      );
      // Already there: an earlier attempt with this key, or a request without a key that found the name, created
      // it (and queued it; the reconciler queues it if that one could not).
      const isNew = await putStatusRecordIfAbsent(status, options);
      return isNew ? [status] : [];
    });
    await queueCreated(request.kind, created.flat(), options);
  } catch (error) {
    await hold.release();
    throw error;
  }
  await hold.complete();
  return ids;
};

/**
 * Accepts validated, normalised records: each gets a status record (`accepted`, in the `open` index) and a message
 * on its queue, exactly once however the caller retries or races: every record is created by one conditional
 * write, and only the request whose write created it queues it. Content already accepted in the last 24 hours
 * gets its earlier id and is not queued again; with an `Idempotency-Key`, the key decides instead.
 * A record stored but not queued (a crash, SQS down, the deadline) is queued by the reconciler within minutes.
 *
 * @returns the record ids in request order.
 * @throws IdempotencyConflictError (422) when the key came before with another body.
 * @throws IdempotencyInProgressError (409) while another request with the key is being processed.
 * @throws QueueUnavailableError (503) when DynamoDB or SQS could not be reached in time; a retry is safe.
 * @example
 * const ids = await acceptRecords({ kind: 'caseRecord', records: [caseRecord], requestId, owner });
 */
export const acceptRecords = async (request: AcceptRequest): Promise<string[]> => {
  const now = request.now ?? new Date();
  const options: CallOptions = { abortSignal: request.abortSignal };
  try {
    const key = await contentIdKey();
    const ids: ContentIds = {
      contentIds: request.records.map((record) => contentId(key, request.kind, record, request.owner)),
      legacyIds: request.records.map((record) => legacyContentId(request.kind, record, request.owner)),
    };
    return request.idempotencyKey === undefined
      ? await acceptByContent(request, ids, now, options)
      : await acceptByKey(request, request.idempotencyKey, ids, now, options);
  } catch (error) {
    if (isAwsUnavailable(error)) {
      throw new QueueUnavailableError('the records could not be stored and queued in time', { cause: error });
    }
    throw error;
  }
};
