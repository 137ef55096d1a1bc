import type { CallOptions } from '../store/statusRecords.ts';
import {
  getStatusRecord,
  noteLatestGeneration,
  putStatusRecordIfAbsent,
  readContentSlot,
} from '../store/statusRecords.ts';
import type { ContentAlias, StatusRecord } from '../store/types.ts';
import type { CaseRecord, SalesRegistration } from '../types.ts';
import { DUPLICATE_WINDOW_MS } from './constants.ts';
import { generationId } from './recordIds.ts';

/** Generations tried in one request before giving up: more would mean a clock or data fault, not traffic. */
const MAX_GENERATIONS_PER_REQUEST = 8;

export interface ContentToAccept {
  /** The content's first id (generation 0), from `contentId`. */
  firstId: string;
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
}

const withinWindow = (status: { acceptedAt: string }, now: Date) =>
  now.getTime() - Date.parse(status.acceptedAt) < DUPLICATE_WINDOW_MS;

const isAlias = (slot: StatusRecord | ContentAlias): slot is ContentAlias => 'aliasOf' in slot;

/** Our own write: the conditional put landed, its answer was lost, and the AWS client's retry found it taken. */
const ownWrite = (status: StatusRecord, candidate: StatusRecord) =>
  status.requestId === candidate.requestId && status.acceptedAt === candidate.acceptedAt;

/**
 * Accepts one distinct content without an `Idempotency-Key`: creates its record, or finds the one accepted within
 * the last 24 hours. Content that comes back later is a new generation with an id derived from the first
 * (`generationId`), created by a conditional write too, so racing requests agree on one record and nothing is
 * left half-written: the hint on the first record is only a short cut.
 *
 * @example
 * const { id, created } = await acceptContent({ firstId, record, now, options, fresh: (id) => newStatusRecord(id, …) });
 */
export const acceptContent = async (content: ContentToAccept): Promise<ContentOutcome> => {
  const { firstId, now, options } = content;
  const first = content.fresh(firstId);
  if (await putStatusRecordIfAbsent(first, options)) return { id: firstId, created: first };

  const stored = await readContentSlot(firstId, options);
  if (stored && !isAlias(stored) && ownWrite(stored, first)) return { id: firstId, created: stored };
  let generation = stored?.latestGeneration ?? 0;
  let current: StatusRecord | ContentAlias | undefined =
    generation === 0 ? stored : await getStatusRecord(generationId(firstId, generation), options);
  for (let tries = 0; tries < MAX_GENERATIONS_PER_REQUEST; tries++) {
    // First accepted under an Idempotency-Key: without a key, the same content is that record.
    if (current && withinWindow(current, now)) return { id: isAlias(current) ? current.aliasOf : current.id };
    generation++;
    const candidate = content.fresh(generationId(firstId, generation));
    if (await putStatusRecordIfAbsent(candidate, options)) {
      await noteLatestGeneration(firstId, generation, options, now);
      return { id: candidate.id, created: candidate };
    }
    current = await getStatusRecord(candidate.id, options);
    if (current && ownWrite(current, candidate)) {
      await noteLatestGeneration(firstId, generation, options, now);
      return { id: candidate.id, created: current };
    }
  }
  throw new Error(`content ${firstId}: no free generation within ${MAX_GENERATIONS_PER_REQUEST} tries`);
};
