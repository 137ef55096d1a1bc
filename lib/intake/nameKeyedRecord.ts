import type { ContentAlias } from '../records/types.ts';
import type { CallOptions, RecordState } from '../store/statusRecords.ts';
import {
  isContentAlias,
  noteLatestGeneration,
  putContentAliasIfAbsent,
  readContentSlot,
} from '../store/statusRecords.ts';
import { MAX_GENERATIONS_PER_REQUEST } from './constants.ts';
import { generationId } from './recordIds.ts';

/** An alias naming this record already stands there: an earlier attempt of the same key wrote it. */
const names = (slot: RecordState | ContentAlias | undefined, recordId: string) =>
  slot !== undefined && isContentAlias(slot) && slot.aliasOf === recordId;

/**
 * Makes a record accepted under an `Idempotency-Key` the newest record of its content, before the record itself
 * is written: an alias naming it takes the content's first id if that is free, else the place after the newest
 * generation (`generationId`), each by one conditional write, in the same order of places as content accepted again
 * without a key. From that write on, the same content sent without a key within 24 hours finds this record (and
 * writes it, should this request not get that far). A request without a key that took the place first is an
 * earlier acceptance: the key still decides, so the keyed record takes the next place.
 *
 * @param alias the alias to write: `id` is the content's first id, `aliasOf` the keyed record's id.
 * @throws Error when no place was free within 8 tries (a clock or data fault, not traffic).
 * @example
 * await nameKeyedRecord({ id: firstId, aliasOf: keyedId(keyHash, firstId), kind, owner, acceptedAt }, options);
 */
export const nameKeyedRecord = async (alias: ContentAlias, options: CallOptions): Promise<void> => {
  const firstId = alias.id;
  if (await putContentAliasIfAbsent(alias, options)) return;
  const stored = await readContentSlot(firstId, options);
  if (names(stored, alias.aliasOf)) return;
  let generation = stored?.latestGeneration ?? 0;
  // A retry of the key (its first attempt failed after naming the record) finds its name at the newest place.
  if (
    generation > 0 &&
    names(await readContentSlot(generationId(firstId, generation), options), alias.aliasOf)
  )
    return;
  for (let tries = 0; tries < MAX_GENERATIONS_PER_REQUEST; tries++) {
    generation++;
    const place = generationId(firstId, generation);
    const taken =
      (await putContentAliasIfAbsent({ ...alias, id: place }, options)) ||
      names(await readContentSlot(place, options), alias.aliasOf);
    if (taken) {
      await noteLatestGeneration(firstId, generation, options, new Date(alias.acceptedAt));
      return;
    }
  }
  throw new Error(`content ${firstId}: no free generation within ${MAX_GENERATIONS_PER_REQUEST} tries`);
};
