import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import type { ContentAlias, StatusRecord } from '../records/types.ts';
import { recordsTable, retentionSettings } from '../settings/settings.ts';
import { OPERATOR_ATTRIBUTES, projectionOf } from './operatorAttributes.ts';
import { batchGetItems, conditionally, type Item } from './table.ts';

/** Options of a call made on behalf of a request with a deadline. */
export interface CallOptions {
  /** Aborts the call (and its retries) when the request's time is up. */
  abortSignal?: AbortSignal;
}

/** Status records are keyed by the record id itself. */
export const toItem = (record: StatusRecord): Item =>
  marshall({ pk: record.id, ...record }, { removeUndefinedValues: true });

export const fromItem = (item: Item): StatusRecord => {
  const { pk: _pk, ...rest } = unmarshall(item);
  return rest as StatusRecord;
};

/**
 * Reads status records by id (with `attributes`, only those); ids without a record are absent from the map.
 *
 * @example
 * const records = await getStatusRecords(['3f0c...'], { consistent: true });
 */
export const getStatusRecords = async (
  ids: string[],
  options: { consistent?: boolean; attributes?: readonly string[] } = {},
): Promise<Map<string, StatusRecord>> => {
  const items = await batchGetItems(ids, {
    consistentRead: options.consistent ?? false,
    attributes: options.attributes,
  });
  return new Map([...items].map(([pk, item]) => [pk, fromItem(item)]));
};

/** A status record as read without its personal fields (`record`). */
export type RecordState = Omit<StatusRecord, 'record'>;

/** What stands at an id, read consistently: everything, or (`withoutPersonalFields`) all but `record`. */
const readSlot = async (
  id: string,
  options: CallOptions & { withoutPersonalFields?: boolean },
): Promise<StatusRecord | ContentAlias | undefined> => {
  const { withoutPersonalFields, ...callOptions } = options;
  const out = await dynamoClient().send(
    new GetItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: id } },
      ConsistentRead: true,
      ...(withoutPersonalFields ? projectionOf(OPERATOR_ATTRIBUTES) : {}),
    }),
    callOptions,
  );
  if (!out.Item) return undefined;
  const { pk: _pk, ...rest } = unmarshall(out.Item);
  return rest as StatusRecord | ContentAlias;
};

/**
 * Reads what stands at a content's first id or at the place of a later generation (a consistent read): a status
 * record without its personal fields (`record`: intake compares ids and times, and a queued message carries no
 * content), the alias of a record accepted under an `Idempotency-Key`, or nothing. So the intake roles may read
 * every attribute but `record` (IAM's `dynamodb:Attributes`, serverless.yml).
 *
 * @example
 * const slot = await readContentSlot(firstId);
 * const id = slot && isContentAlias(slot) ? slot.aliasOf : slot?.id;
 */
export const readContentSlot = (
  id: string,
  options: CallOptions = {},
): Promise<RecordState | ContentAlias | undefined> =>
  readSlot(id, { ...options, withoutPersonalFields: true });

/**
 * Which of these ids something stands at (a status record or a content alias), read consistently, keys only: one
 * BatchGetItem for up to 100 ids, where a `readContentSlot` each would be a call each.
 *
 * @example
 * const taken = await takenIds([legacyId1, legacyId2]); // Set { legacyId2 }
 */
export const takenIds = async (ids: string[], options: CallOptions = {}): Promise<Set<string>> =>
  new Set((await batchGetItems(ids, { consistentRead: true, attributes: [], ...options })).keys());

/**
 * Whether what stands at an id is a content alias (it names a record) rather than a status record.
 *
 * @example
 * const slot = await readContentSlot(firstId);
 * const id = slot && isContentAlias(slot) ? slot.aliasOf : slot?.id;
 */
export const isContentAlias = (slot: RecordState | ContentAlias): slot is ContentAlias => 'aliasOf' in slot;

/**
 * Reads one status record, whole (a consistent read), or undefined (also for a content alias, which is no record).
 *
 * @example
 * const status = await getStatusRecord('3f0c...');
 */
export const getStatusRecord = async (
  id: string,
  options: CallOptions = {},
): Promise<StatusRecord | undefined> => {
  const slot = await readSlot(id, options);
  return slot && !isContentAlias(slot) ? slot : undefined;
};

/**
 * Reads one status record without its personal fields (`record`), or undefined: what the status look-up shows and
 * intake checks need, and all the status and intake roles may read (IAM's `dynamodb:Attributes`, serverless.yml).
 *
 * @example
 * const status = await getRecordState('3f0c...'); // { id, status: 'delivered', ... } and never `record`
 */
export const getRecordState = async (
  id: string,
  options: CallOptions = {},
): Promise<RecordState | undefined> => {
  const slot = await readContentSlot(id, options);
  return slot && !isContentAlias(slot) ? slot : undefined;
};

/**
 * When a content alias expires (epoch seconds): RECORD_RETENTION_DAYS after the acceptance it stands for; the
 * same for a content's first record once a newer generation of it was accepted at `acceptedAt`.
 */
const expiresAfterAcceptance = (acceptedAt: string): number =>
  Math.floor(Date.parse(acceptedAt) / 1000) + retentionSettings().recordDays * 86_400;

/**
 * Writes a content alias at its id (a content's first id, or the place of a later generation of it) unless
 * something stands there already: the one write that decides which record a content's place names. The alias
 * holds ids only, and expires by TTL (`expiresAt`) RECORD_RETENTION_DAYS after its acceptance, as records do after
 * settling.
 *
 * @returns false when the place was already taken.
 * @example
 * if (!(await putContentAliasIfAbsent({ id: firstId, aliasOf: keyedRecordId, kind, owner, acceptedAt }))) …
 */
export const putContentAliasIfAbsent = async (
  alias: ContentAlias,
  options: CallOptions = {},
): Promise<boolean> =>
  conditionally(
    dynamoClient().send(
      new PutItemCommand({
        TableName: recordsTable(),
        Item: marshall(
          { pk: alias.id, ...alias, expiresAt: expiresAfterAcceptance(alias.acceptedAt) },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
      options,
    ),
  );

/**
 * Writes a status record unless one with its id exists: the one write that decides which request creates a
 * record, however many race for it.
 *
 * @returns false when the id was already taken.
 * @example
 * if (await putStatusRecordIfAbsent(status)) queue(status);
 */
export const putStatusRecordIfAbsent = async (
  record: StatusRecord,
  options: CallOptions = {},
): Promise<boolean> =>
  conditionally(
    dynamoClient().send(
      new PutItemCommand({
        TableName: recordsTable(),
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
      options,
    ),
  );

/**
 * Notes on the first record of a content that generation `generation` of it exists, so that the next duplicate
 * check starts there. Never lowers the hint; a lost note only costs the next check one more read. It also keeps
 * the first record (or alias) until RECORD_RETENTION_DAYS after this generation's acceptance (`at`): the duplicate
 * check finds the generations through it, so it must not expire while a newer generation is still in its 24 hours.
 *
 * @example
 * await noteLatestGeneration(firstId, 1, {}, new Date());
 */
export const noteLatestGeneration = async (
  firstId: string,
  generation: number,
  options: CallOptions = {},
  at: Date = new Date(),
): Promise<void> => {
  await conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: firstId } },
        UpdateExpression: 'SET latestGeneration = :generation, expiresAt = :expires',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(latestGeneration) OR latestGeneration < :generation)',
        ExpressionAttributeValues: {
          ':generation': { N: String(generation) },
          ':expires': { N: String(expiresAfterAcceptance(at.toISOString())) },
        },
      }),
      options,
    ),
  );
};

/**
 * Marks a stored record that its request could not queue (`unqueued`), so that the client's retry of the request
 * queues it again at once (lib/intake/unqueued.ts). Best effort: a mark lost leaves the record to the reconciler.
 *
 * @example
 * await noteUnqueued('3f0c…', { abortSignal: AbortSignal.timeout(1000) });
 */
export const noteUnqueued = async (id: string, options: CallOptions = {}): Promise<void> => {
  await conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'SET unqueued = :true',
        ConditionExpression: '#status = :accepted',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':true': { BOOL: true }, ':accepted': { S: 'accepted' } },
      }),
      options,
    ),
  );
};

/** A record's customer fields as they stand: the normalised record, while it still holds its personal data. */
export interface CustomerFields {
  kind: StatusRecord['kind'];
  record: StatusRecord['record'];
}

/**
 * Reads a record's normalised record (`record`, the customer's fields) for the console's audited "Customer" view:
 * only `kind`, `record` and `personalDataRemovedAt`. Undefined when there is no such record or its personal data
 * was removed (lib/retention: what is left of `record` then is no customer's).
 *
 * @example
 * const customer = await getCustomerFields('3f0c…'); // { kind: 'caseRecord', record: { firstName: 'Alex', … } }
 */
export const getCustomerFields = async (id: string): Promise<CustomerFields | undefined> => {
  const out = await dynamoClient().send(
    new GetItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: id } },
      ConsistentRead: true,
      ...projectionOf(['id', 'kind', 'record', 'personalDataRemovedAt']),
    }),
  );
  if (!out.Item) return undefined;
  const read = unmarshall(out.Item) as Partial<StatusRecord>;
  if (!read.kind || !read.record || read.personalDataRemovedAt) return undefined;
  return { kind: read.kind, record: read.record };
};
