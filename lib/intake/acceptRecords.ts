import { queueUrlFor } from '../config.ts';
import { sendRecords } from '../queue/sendRecords.ts';
import {
  deleteStatusRecords,
  fromItem,
  getStatusRecords,
  idempotencyPk,
  pointToLatest,
  putStatusRecordIfAbsent,
  putStatusRecords,
  readIdempotencyEntry,
} from '../store/statusRecords.ts';
import { batchGetItems } from '../store/table.ts';
import type { IdempotencyEntry, StatusRecord } from '../store/types.ts';
import type { CaseRecord, QueuedRecord, RecordKind, SalesRegistration } from '../types.ts';
import { DUPLICATE_WINDOW_MS, IDEMPOTENCY_WINDOW_SECONDS, REQUEUE_UNTOUCHED_AFTER_MS } from './constants.ts';
import { IdempotencyConflictError, QueueUnavailableError } from './errors.ts';
import { canonicalJson, contentId, laterId, sha256 } from './recordIds.ts';

export interface AcceptRequest {
  kind: RecordKind;
  records: (SalesRegistration | CaseRecord)[];
  requestId: string;
  /** The calling client's name: records, duplicates and idempotency keys are per owner. */
  owner: string;
  idempotencyKey?: string;
  now?: Date;
}

/** What happens to one distinct content of the request. */
interface Decision {
  id: string;
  /** A status record this request writes (a new record). */
  create?: StatusRecord;
  /** The first record of the content must point at the new one (same content after the window). */
  pointFrom?: string;
  /** The fast path has already written `create`. */
  written?: boolean;
  /** Queue this record (new, or an untouched duplicate whose queueing may have been lost). */
  queue?: QueuedRecord;
}

const newStatus = (id: string, request: AcceptRequest, record: SalesRegistration | CaseRecord, at: string) =>
  ({
    id,
    kind: request.kind,
    status: 'accepted',
    attempts: 0,
    acceptedAt: at,
    updatedAt: at,
    requestId: request.requestId,
    owner: request.owner,
    record,
  }) satisfies StatusRecord;

const message = (status: StatusRecord): QueuedRecord => ({
  id: status.id,
  kind: status.kind,
  requestId: status.requestId,
  record: status.record,
});

/** True when nothing shows the record was ever queued: still accepted, never attempted, not touched for `forMs`. */
const untouched = (status: StatusRecord, now: Date, forMs = REQUEUE_UNTOUCHED_AFTER_MS): boolean =>
  status.status === 'accepted' &&
  status.attempts === 0 &&
  status.error === undefined &&
  now.getTime() - Date.parse(status.updatedAt) >= forMs;

/** Decides for one content given the first record stored under its id (if any). */
const decide = async (
  firstId: string,
  first: StatusRecord | undefined,
  request: AcceptRequest,
  record: SalesRegistration | CaseRecord,
  now: Date,
): Promise<Decision> => {
  const at = now.toISOString();
  if (!first) {
    const create = newStatus(firstId, request, record, at);
    return { id: firstId, create, queue: message(create) };
  }
  if (first.requestId === request.requestId && first.acceptedAt === at && untouched(first, now, 0)) {
    // This very call's own write (its request id and instant): the conditional PutItem landed, its answer was
    // lost, and the AWS client's retry found the record. Nobody has queued it yet.
    return { id: first.id, queue: message(first) };
  }
  const latestId = first.latestId ?? first.id;
  const latestAt = Date.parse(first.latestAcceptedAt ?? first.acceptedAt);
  if (now.getTime() - latestAt >= DUPLICATE_WINDOW_MS) {
    const create = newStatus(laterId(firstId, now), request, record, at);
    return { id: create.id, create, pointFrom: firstId, queue: message(create) };
  }
  const latest = latestId === first.id ? first : (await getStatusRecords([latestId])).get(latestId);
  return { id: latestId, queue: latest && untouched(latest, now) ? message(latest) : undefined };
};

/**
 * Accepts validated, normalised records: each gets a status record (`accepted`) and a message on its queue,
 * exactly once however the caller retries. Content already accepted in the last 24 hours gets its earlier id
 * and is not queued again. Costs one DynamoDB call and one SQS call for a single record.
 *
 * @returns the record ids in request order.
 * @throws IdempotencyConflictError when the `Idempotency-Key` came before with another body.
 * @throws QueueUnavailableError when some records could not be queued; those are not accepted (their status
 *   records are removed), the ones that were queued stay, and a retry queues each record exactly once.
 * @example
 * const ids = await acceptRecords({ kind: 'caseRecord', records: [caseRecord], requestId, owner });
 */
export const acceptRecords = async (request: AcceptRequest): Promise<string[]> => {
  const now = request.now ?? new Date();
  const firstIds = request.records.map((record) => contentId(request.kind, record, request.owner));
  const contents = new Map<string, SalesRegistration | CaseRecord>();
  for (const [i, id] of firstIds.entries()) if (!contents.has(id)) contents.set(id, request.records[i]);

  const decisions = new Map<string, Decision>();
  let idempotencyEntry: IdempotencyEntry | undefined;

  if (contents.size === 1 && !request.idempotencyKey) {
    // Fast path: one conditional write decides whether the content is new.
    const [[firstId, record]] = contents;
    const candidate = newStatus(firstId, request, record, now.toISOString());
    if (await putStatusRecordIfAbsent(candidate)) {
      decisions.set(firstId, { id: firstId, create: candidate, written: true, queue: message(candidate) });
    } else {
      const first = (await getStatusRecords([firstId])).get(firstId);
      decisions.set(firstId, await decide(firstId, first, request, record, now));
    }
  } else {
    const keyHash =
      request.idempotencyKey === undefined
        ? undefined
        : sha256(`${request.owner}\n${request.idempotencyKey}`);
    const keyPk = keyHash === undefined ? undefined : idempotencyPk(request.kind, keyHash);
    const found = await batchGetItems(keyPk ? [...contents.keys(), keyPk] : [...contents.keys()]);
    if (keyPk && keyHash) {
      const entry = readIdempotencyEntry(found.get(keyPk));
      // The normalised records stand for the body: computed only when a key came, it costs 3 ms for 500 records.
      const bodyHash = sha256(canonicalJson(request.records));
      if (entry && entry.expiresAt > now.getTime() / 1000) {
        if (entry.bodyHash !== bodyHash) throw new IdempotencyConflictError();
      } else {
        const expiresAt = Math.floor(now.getTime() / 1000) + IDEMPOTENCY_WINDOW_SECONDS;
        idempotencyEntry = { kind: request.kind, keyHash, bodyHash, expiresAt };
      }
    }
    for (const [firstId, record] of contents) {
      const item = found.get(firstId);
      decisions.set(firstId, await decide(firstId, item ? fromItem(item) : undefined, request, record, now));
    }
  }

  const all = [...decisions.values()];
  const toWrite = all.filter((d) => d.create && !d.written).map((d) => d.create as StatusRecord);
  if (toWrite.length > 0 || idempotencyEntry) {
    await putStatusRecords(toWrite, idempotencyEntry ? [idempotencyEntry] : []);
  }
  await Promise.all(
    all.flatMap((d) =>
      d.pointFrom && d.create ? [pointToLatest(d.pointFrom, d.id, d.create.acceptedAt)] : [],
    ),
  );

  const toQueue = all.flatMap((d) => (d.queue ? [d.queue] : []));
  const failedIds = toQueue.length > 0 ? await sendRecords(queueUrlFor(request.kind), toQueue) : [];
  if (failedIds.length > 0) {
    // Records this request created but could not queue are taken back, so they are not half accepted; the
    // caller's retry creates them again under the same ids. Should this clean-up fail as well, the duplicate
    // check of that retry queues them again (they stay untouched `accepted`).
    const created = new Set(all.filter((d) => d.create).map((d) => d.id));
    const takeBack = failedIds.filter((id) => created.has(id));
    await deleteStatusRecords(takeBack).catch(() => undefined);
    throw new QueueUnavailableError(failedIds.length);
  }
  return firstIds.map((firstId) => (decisions.get(firstId) as Decision).id);
};
