import type { StatusRecord } from '../records/types.ts';
import type { CallOptions, RecordState } from '../store/statusRecords.ts';
import {
  getRecordState,
  isContentAlias,
  noteLatestGeneration,
  putStatusRecordIfAbsent,
  readContentSlot,
} from '../store/statusRecords.ts';
import type { CaseRecord, SalesRegistration } from '../types.ts';
import { DUPLICATE_WINDOW_MS, MAX_GENERATIONS_PER_REQUEST } from './constants.ts';
import { generationId } from './recordIds.ts';

export interface ContentToAccept {
  /** The content's first id (generation 0), from `contentId`. */
  firstId: string;
  /** Its first id before content ids were keyed (`legacyContentId`): a repeat of content accepted under it is found. */
  legacyFirstId?: string;
  record: SalesRegistration | CaseRecord;
  now: Date;
  options: CallOptions;
  /** The status record this request would create under an id. */
  fresh: (id: string) => StatusRecord;
}

export interface ContentOutcome {
  /** The record's id: a new one, or the one accepted earlier within the duplicate window. */
  id: string;
  /** Set when this request created the record (and so must queue it). */
  created?: StatusRecord;
  /**
   * Set when the record was accepted earlier: as read (without its personal fields), so that the caller can queue
   * it again if it may never have been queued (lib/intake/unqueued.ts), without another read.
   */
  found?: RecordState;
}

const withinWindow = (status: { acceptedAt: string }, now: Date) =>
  now.getTime() - Date.parse(status.acceptedAt) < DUPLICATE_WINDOW_MS;

/**
 * Our own write: the conditional put landed, its answer was lost, and the AWS client's retry found it taken. What
 * stands there is then the candidate itself, which the caller returns (the read leaves out the personal fields).
 */
const ownWrite = (status: RecordState, candidate: StatusRecord) =>
  status.requestId === candidate.requestId && status.acceptedAt === candidate.acceptedAt;

/**
 * The record an alias names. A keyed request names its record before writing it, so the record may not be there
 * yet (that request is still running, or died): the same content makes the same record, so this request writes
 * it, with the same conditional write, and queues it if its write is the one that created it.
 */
const recordNamed = async (id: string, content: ContentToAccept): Promise<ContentOutcome> => {
  const named = await getRecordState(id, content.options);
  if (named) return { id, found: named };
  const candidate = content.fresh(id);
  if (await putStatusRecordIfAbsent(candidate, content.options)) return { id, created: candidate };
  const stored = await getRecordState(id, content.options);
  if (!stored) return { id };
  return ownWrite(stored, candidate) ? { id, created: candidate } : { id, found: stored };
};

/**
 * A repeat of content accepted before content ids were keyed: the newest record of the content's legacy places
 * (its legacy first id, then its generations), when it was accepted within the duplicate window. Read only: nothing
 * is created under a legacy id; content not found here gets keyed ids from now on. Needed only while records
 * accepted under legacy ids are within the window (24 hours after a stage's change).
 */
const legacyRepeat = async (
  legacyFirstId: string,
  content: ContentToAccept,
): Promise<ContentOutcome | undefined> => {
  const { options, now } = content;
  const first = await readContentSlot(legacyFirstId, options);
  if (!first) return undefined;
  let generation = first.latestGeneration ?? 0;
  let newest =
    generation === 0 ? first : await readContentSlot(generationId(legacyFirstId, generation), options);
  // The hint on the first record may lag a generation a racing request created: walk on while places are taken.
  for (let tries = 0; newest && tries < MAX_GENERATIONS_PER_REQUEST; tries++) {
    const next = await readContentSlot(generationId(legacyFirstId, generation + 1), options);
    if (!next) break;
    generation++;
    newest = next;
  }
  if (!newest || !withinWindow(newest, now)) return undefined;
  return isContentAlias(newest) ? recordNamed(newest.aliasOf, content) : { id: newest.id, found: newest };
};

/**
 * Accepts one distinct content without an `Idempotency-Key`: creates its record, or finds the newest one accepted
 * within the last 24 hours. Every record of a content has a place of its own, taken by one conditional write: the
 * first id, then the places of later generations (`generationId`), in order. A record of the content accepted
 * again after 24 hours takes the next place; one accepted under an `Idempotency-Key` takes it too, as an alias
 * naming its keyed record. So the newest place holds the newest record, whoever wrote it, and racing requests
 * agree on one record; the hint on the first record (`latestGeneration`) is only a short cut. Content accepted
 * within the window under its legacy id (before content ids were keyed) is found first, and its record answered.
 *
 * @example
 * const { id, created } = await acceptContent({ firstId, record, now, options, fresh: (id) => newStatusRecord(id, …) });
 */
export const acceptContent = async (content: ContentToAccept): Promise<ContentOutcome> => {
  const { firstId, now, options } = content;
  if (content.legacyFirstId !== undefined) {
    const repeat = await legacyRepeat(content.legacyFirstId, content);
    if (repeat) return repeat;
  }
  const first = content.fresh(firstId);
  if (await putStatusRecordIfAbsent(first, options)) return { id: firstId, created: first };

  const stored = await readContentSlot(firstId, options);
  if (stored && !isContentAlias(stored) && ownWrite(stored, first)) return { id: firstId, created: first };
  let generation = stored?.latestGeneration ?? 0;
  let current = generation === 0 ? stored : await readContentSlot(generationId(firstId, generation), options);
  for (let tries = 0; tries < MAX_GENERATIONS_PER_REQUEST; tries++) {
    if (current && withinWindow(current, now))
      return isContentAlias(current)
        ? recordNamed(current.aliasOf, content)
        : { id: current.id, found: current };
    generation++;
    const candidate = content.fresh(generationId(firstId, generation));
    if (await putStatusRecordIfAbsent(candidate, options)) {
      await noteLatestGeneration(firstId, generation, options, now);
      return { id: candidate.id, created: candidate };
    }
    // Taken: by a racing request without a key (a record), or with one (an alias naming its record).
    current = await readContentSlot(candidate.id, options);
    if (current && !isContentAlias(current) && ownWrite(current, candidate)) {
      await noteLatestGeneration(firstId, generation, options, now);
      return { id: candidate.id, created: candidate };
    }
  }
  throw new Error(`content ${firstId}: no free generation within ${MAX_GENERATIONS_PER_REQUEST} tries`);
};
