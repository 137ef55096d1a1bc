import { inParallel } from '../concurrency/bounded.ts';
import { traceparentOf } from '../observability/tracing.ts';
import { queuedRecordOf } from '../queue/queuedRecord.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import { dueAfter } from '../records/due.ts';
import { caseFrameKeyOf, frameKeyOf, openKindOf, statusKeyOf } from '../records/keys.ts';
import type { StatusRecord } from '../records/types.ts';
import { queueUrlFor, reconcileSettings } from '../settings/settings.ts';
import type { CallOptions, RecordState } from '../store/statusRecords.ts';
import { getRecordState, noteUnqueued, putStatusRecordIfAbsent, takenIds } from '../store/statusRecords.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';
import { acceptContent } from './acceptContent.ts';
import { contentIdKey } from './contentIdKey.ts';
import { DEFAULT_REMAINING_MS } from './deadline.ts';
import { isAwsUnavailable, QueueUnavailableError } from './errors.ts';
import { holdIdempotencyKey } from './idempotencyHold.ts';
import { nameKeyedRecord } from './nameKeyedRecord.ts';
import { contentId, keyedId, legacyContentId, sha256 } from './recordIds.ts';
import { leftUnqueued } from './unqueued.ts';

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
  /** When the invocation ends at the latest (lib/intake/deadline.ts intakeAnswerBy); default: the function timeout on. */
  answerBy?: Date;
}

/** The active span's `traceparent`, as a status record keeps it (nothing when no span is active). */
const traceContext = (): { traceparent?: string } => {
  const traceparent = traceparentOf();
  return traceparent ? { traceparent } : {};
};

/** Conditional writes in flight at once for a large request. */
const PARALLEL_WRITES = 16;

/**
 * A new `accepted` status record. It is in the `open` index from the start, due for the reconciler a few minutes
 * on: if this request dies before its message is sent, the reconciler queues the record; a worker that receives
 * the message first pushes `dueAt` on. A sales record also carries its `frameKey` (the sparse `frame` index, for
 * look-ups by frame number) and its dealer, a case that names a frame number its own `frameKey` (the console's search
 * by frame number); every record its `statusKey` (the `status` index, for operations).
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
  answerBy: (request.answerBy ?? new Date(now.getTime() + DEFAULT_REMAINING_MS)).toISOString(),
  owner: request.owner,
  ...(request.test ? { test: true as const } : {}),
  // The intake span's context, kept on the record: whoever queues it later (the reconciler, a redrive) keeps its trace.
  ...traceContext(),
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
    : (record as CaseRecord).frameNo?.trim()
      ? { frameKey: caseFrameKeyOf((record as CaseRecord).frameNo as string) }
      : {}),
});

/** Content id → record, each distinct content once, in request order. */
const distinctContents = (request: AcceptRequest, contentIds: string[]) => {
  const contents = new Map<string, SalesRegistration | CaseRecord>();
  for (const [i, id] of contentIds.entries()) if (!contents.has(id)) contents.set(id, request.records[i]);
  return contents;
};

/**
 * The marks of records not queued get half a second of their own: the request's deadline may be what failed it,
 * and the answer (and a key's release, a second) must fit in ANSWER_RESERVE_MS.
 */
const markOptions = (): CallOptions => ({ abortSignal: AbortSignal.timeout(500) });

/** How a request tells records an earlier request stored but may not have queued. */
interface Earlier {
  /** It holds a key whose earlier request died without a word (lib/intake/unqueued.ts leftUnqueued). */
  died: boolean;
  /** This request's time, against which an earlier request's `answerBy` has passed or not. */
  now: Date;
}

/**
 * Sends the messages of the records this request created, and of those an earlier request stored but may never
 * have queued (`found`, lib/intake/unqueued.ts leftUnqueued: this is the client's retry of that request); any it
 * could not send fail the request with 503, marked `unqueued` first, so that the client's retry queues them at
 * once.
 */
const queueRecords = async (
  kind: RecordKind,
  created: StatusRecord[],
  found: RecordState[],
  earlier: Earlier,
  options: CallOptions,
) => {
  const toQueue = new Map<string, RecordState>();
  for (const status of created) toQueue.set(status.id, status);
  for (const status of found) if (leftUnqueued(status, earlier, earlier.now)) toQueue.set(status.id, status);
  if (toQueue.size === 0) return;
  let failedIds: string[];
  try {
    failedIds = await sendRecords(queueUrlFor(kind), [...toQueue.values()].map(queuedRecordOf), options);
  } catch (error) {
    // Which batches went out is unknown: every record may be unqueued (a second message is harmless).
    await markUnqueued([...toQueue.keys()]);
    throw error;
  }
  if (failedIds.length > 0) {
    await markUnqueued(failedIds);
    throw new QueueUnavailableError(`${failedIds.length} record(s) could not be queued`);
  }
};

/** Marks records stored but not queued (best effort: one lost leaves its record to the reconciler). */
const markUnqueued = async (ids: string[]) => {
  const options = markOptions();
  await inParallel(ids, PARALLEL_WRITES, (id) => noteUnqueued(id, options).catch(() => undefined));
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
  // Content accepted before content ids were keyed is looked for only where its legacy first id is taken, and the
  // request's legacy places are read in one call: nothing is created under a legacy id any more, so a place found
  // empty stays empty. (A read per record before doubled intake's calls and halved npm start's intake.)
  const legacyTaken = await takenIds([...legacyOf.values()], options);
  const outcomes = await inParallel(contents, PARALLEL_WRITES, ([firstId, record]) =>
    acceptContent({
      firstId,
      legacyFirstId: legacyTaken.has(legacyOf.get(firstId) as string) ? legacyOf.get(firstId) : undefined,
      record,
      now,
      options,
      fresh: (id) => newStatusRecord(id, request, record, now),
    }),
  );
  const idOf = new Map(contents.map(([firstId], i) => [firstId, outcomes[i].id]));
  await queueRecords(
    request.kind,
    outcomes.flatMap((outcome) => (outcome.created ? [outcome.created] : [])),
    outcomes.flatMap((outcome) => (outcome.found ? [outcome.found] : [])),
    { died: false, now },
    options,
  );
  return contentIds.map((firstId) => idOf.get(firstId) as string);
};

/**
 * With an `Idempotency-Key`: the key decides. The request that holds the key creates the records (ids derived
 * from key and content, so a retry names the same ones) and queues them, and those an earlier request with the key
 * stored but may never have queued; a repeat with the same body is answered the same ids. A repeat answered from
 * the key's entry (`done`) reads and queues nothing: the entry is written `done` only after every record of the
 * request was queued.
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
      // Already there: an earlier attempt with this key (which failed or died, or this request would not hold the
      // key), or a request without a key that found the name, created it; queued again below if it may never have
      // been (one read, only when the record exists).
      if (await putStatusRecordIfAbsent(status, options)) return { created: status };
      return { found: await getRecordState(status.id, options) };
    });
    await queueRecords(
      request.kind,
      created.flatMap((outcome) => (outcome.created ? [outcome.created] : [])),
      created.flatMap((outcome) => (outcome.found ? [outcome.found] : [])),
      { died: hold.earlierDied, now },
      options,
    );
  } catch (error) {
    await hold.release();
    throw error;
  }
  await hold.complete();
  return ids;
};

/**
 * Accepts validated, normalised records: each gets a status record (`accepted`, in the `open` index) and a message
 * on its queue, once however the caller retries or races: every record is created by one conditional write, and
 * the request whose write created it queues it. Content already accepted in the last 24 hours gets its earlier id
 * and no new record; with an `Idempotency-Key`, the key decides instead. A record stored but not queued (a crash,
 * SQS down, the deadline) is queued again by the client's retry of the request, if it comes (lib/intake/unqueued.ts:
 * a record its request marked `unqueued`, or with a key retaken after a failure any it left unmoved), else by the reconciler within minutes; a record
 * queued twice is delivered once (the worker's claim).
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
