import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { inParallel } from '../concurrency/bounded.ts';
import { cleanFeedErrors } from '../feed/feedErrors.ts';
import { recordsTable } from '../settings/settings.ts';
import { type DueIndex, dueIds } from '../store/sparseIndex.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import { conditionally } from '../store/table.ts';
import { RECORD_KINDS, type RecordKind } from '../types.ts';
import { withoutPersonalData } from './personalFields.ts';
import { type PurgedParts, withoutPersonalValues } from './withoutPersonalValues.ts';

/**
 * The sparse global secondary index of settled records whose personal fields are still kept: partition key
 * `purgeKind` (the record's kind, set by the worker's settling write, removed by redrive and by the purge), sort key
 * `purgeAt` (ISO time). Keys only: the purge reads the records themselves, consistently.
 */
export const PURGE_INDEX = 'purge';

/** Records purged in one run at most (the rest wait for the next run, a minute later on AWS). */
export const DEFAULT_PURGE_LIMIT = 500;

/** Updates in flight at once: a run of the limit takes seconds, well inside the reconciler's minute. */
const PARALLEL_UPDATES = 8;

export interface PurgeOptions {
  /** The clock: records whose `purgeAt` is at or before it are purged. Default: the time of the call. */
  now?: Date;
  /** At most this many records in this run, all kinds together (default {@link DEFAULT_PURGE_LIMIT}). */
  limit?: number;
  kinds?: readonly RecordKind[];
}

export interface PurgeResult {
  /** Records whose personal fields this run removed, per kind. */
  purged: Record<RecordKind, number>;
  /** Records found due but left alone: redriven (or settled again) meanwhile, or gone. */
  skipped: number;
  /** True when the run stopped at its limit: more records may be due (the next run takes them). */
  limited: boolean;
}

const PURGE: DueIndex = { name: PURGE_INDEX, partitionKey: 'purgeKind', sortKey: 'purgeAt' };

/** The ids of a kind's records due for the purge by `now`, oldest `purgeAt` first, at most `limit`. */
const dueForPurge = async (kind: RecordKind, nowIso: string, limit: number): Promise<string[]> => {
  const ids: string[] = [];
  for await (const page of dueIds(PURGE, kind, { dueBefore: nowIso, limit })) ids.push(...page);
  return ids;
};

/**
 * Replaces a settled record's normalised record with its kept fields, its stored texts (`error`, `history[].error`,
 * `pendingEvents[].error`) with their cleaned versions, and takes it out of the `purge` index, only if it is still
 * settled and still due: a record redriven meanwhile (purgeAt removed) or settled again (a later purgeAt) keeps its
 * data. An outbox published meanwhile (its size changed) is not written back: the next run purges the record.
 * The `frame` and `status` indexes project `error` from the item, so cleaning the item cleans them.
 */
const purgeOne = (id: string, kept: object, parts: PurgedParts, nowIso: string): Promise<boolean> => {
  const set = ['#record = :kept', 'personalDataRemovedAt = :now'];
  const conditions = ['#status <> :accepted', 'purgeAt <= :now'];
  const names: Record<string, string> = { '#record': 'record', '#status': 'status' };
  const values: Record<string, AttributeValue> = {
    ':kept': { M: marshall(kept, { removeUndefinedValues: true }) },
    ':now': { S: nowIso },
    ':accepted': { S: 'accepted' },
  };
  if (parts.error !== undefined) {
    set.push('#error = :error');
    names['#error'] = 'error';
    values[':error'] = { S: parts.error };
  }
  if (parts.history) {
    set.push('#history = :history');
    conditions.push('size(#history) = :historySize');
    names['#history'] = 'history';
    values[':history'] = marshall({ h: parts.history }, { removeUndefinedValues: true }).h;
    values[':historySize'] = { N: String(parts.history.length) };
  }
  if (parts.pendingEvents) {
    set.push('pendingEvents = :pending');
    conditions.push('size(pendingEvents) = :pendingSize');
    values[':pending'] = marshall({ p: parts.pendingEvents }, { removeUndefinedValues: true }).p;
    values[':pendingSize'] = { N: String(parts.pendingEvents.length) };
  }
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: `SET ${set.join(', ')} REMOVE purgeKind, purgeAt`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * Removes the personal data of settled records whose time has come: the fields of `record` not classed `kept`, and
 * their values wherever a stored text holds them (`error`, `history`, the event outbox, the record's event feed entries;
 * see withoutPersonalValues and lib/feed/feedErrors.ts).
 * Due at `purgeAt`, set when the record settled (PERSONAL_DATA_RETENTION_DAYS after, twice that for a failed
 * record), found through the sparse `purge` index (no
 * table scan). What look-ups, events and operations need stays until the record expires by TTL (`expiresAt`).
 * Bounded by `limit`; running it again, or twice at once, is harmless. The reconciler runs it every minute, on AWS
 * and in `npm start`.
 *
 * @example
 * const { purged } = await purgePersonalData({ now: new Date() }); // { salesRegistration: 3, caseRecord: 0 }
 */
export const purgePersonalData = async (options: PurgeOptions = {}): Promise<PurgeResult> => {
  const nowIso = (options.now ?? new Date()).toISOString();
  const limit = options.limit ?? DEFAULT_PURGE_LIMIT;
  const result: PurgeResult = { purged: { salesRegistration: 0, caseRecord: 0 }, skipped: 0, limited: false };
  let left = limit;
  for (const kind of options.kinds ?? RECORD_KINDS) {
    if (left <= 0) break;
    const ids = await dueForPurge(kind, nowIso, left);
    left -= ids.length;
    const records = await getStatusRecords(ids, { consistent: true });
    const outcomes = await inParallel(ids, PARALLEL_UPDATES, async (id) => {
      const status = records.get(id);
      // Not there (deleted since the index was read), or no longer settled: the condition would refuse it anyway.
      if (!status || status.status === 'accepted') return false;
      const parts = withoutPersonalValues(status);
      // The feed's copies first: once purgeOne takes the record out of the purge index, no run comes back to them.
      await cleanFeedErrors(id, parts.history ?? []);
      return purgeOne(id, withoutPersonalData(kind, status.record ?? {}), parts, nowIso);
    });
    const purged = outcomes.filter(Boolean).length;
    result.purged[kind] += purged;
    result.skipped += outcomes.length - purged;
  }
  result.limited = left <= 0;
  return result;
};
