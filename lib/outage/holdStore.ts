import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { GetItemCommand, UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import { projectionOf } from '../store/operatorAttributes.ts';
import type { TableReader } from '../store/statusIndex.ts';
import { batchGetItems, conditionally, type Item } from '../store/table.ts';
import { DOWNSTREAMS, holdKey } from './constants.ts';
import { openingHold } from './rules.ts';
import type { Downstream, HoldRecord } from './types.ts';

/*
 * The hold items in the records table. Every write is conditional: a change of the hold is written only over the
 * version it was computed from (compare and set), a probe is claimed only while `probeAt` has passed; so every
 * worker instance agrees on one hold per downstream, however many write at once. The items carry no attribute of
 * any index and no `expiresAt`: they appear in no listing and never expire.
 */

const fromItem = (downstream: Downstream, item: Item | undefined): HoldRecord => {
  if (!item) return openingHold(downstream);
  const { pk: _pk, ...rest } = unmarshall(item);
  return { ...openingHold(downstream), ...rest } as HoldRecord;
};

/**
 * Reads a downstream's hold, consistently (a worker about to change it must see the last write).
 *
 * @example
 * const hold = await readHold('erp'); // { downstream: 'erp', held: false, failures: 0, ... }
 */
export const readHold = async (downstream: Downstream): Promise<HoldRecord> => {
  const out = await dynamoClient().send(
    new GetItemCommand({
      TableName: recordsTable(),
      Key: { pk: { S: holdKey(downstream) } },
      ConsistentRead: true,
    }),
  );
  return fromItem(downstream, out.Item);
};

/**
 * Reads both downstreams' holds, consistently: in one call (BatchGetItem, which the reconciler may call), or, given
 * an operator's reader (`npm run records`, over the SDK's client, which finds credentials as the AWS CLI does), with
 * one GetItem each naming the hold's attributes (OperationsRole reads only named attributes that hold no personal data).
 *
 * @example
 * const { erp, crm } = await readHolds();
 * const viaOperator = await readHolds(source.reader);
 */
export const readHolds = async (reader?: TableReader): Promise<Record<Downstream, HoldRecord>> => {
  if (reader) {
    const [erp, crm] = await Promise.all(
      (['erp', 'crm'] as const).map((downstream) =>
        reader.getItem({
          TableName: recordsTable(),
          Key: { pk: { S: holdKey(downstream) } },
          ConsistentRead: true,
          ...projectionOf(HOLD_ATTRIBUTES),
        }),
      ),
    );
    return { erp: fromItem('erp', erp.Item), crm: fromItem('crm', crm.Item) };
  }
  const items = await batchGetItems(DOWNSTREAMS.map(holdKey), { consistentRead: true });
  return { erp: fromItem('erp', items.get(holdKey('erp'))), crm: fromItem('crm', items.get(holdKey('crm'))) };
};

/** Fields written by a change (`probeAt` apart: see writeHold). */
export const HOLD_FIELDS = [
  'downstream',
  'held',
  'reason',
  'heldSince',
  'closedAt',
  'failures',
  'recentCalls',
  'callsSinceClose',
  'firstFailedRecord',
  'severalRecords',
  'apiUsage',
  'version',
  'updatedAt',
] as const;

/** Every attribute of a hold item: what an operator's read names. */
export const HOLD_ATTRIBUTES = [...HOLD_FIELDS, 'probeAt'] as const;

/**
 * Writes `next` over `current`, only if the stored hold is still the version `current` was read at. `probeAt` is
 * written only when the hold opens or closes: between those only a claim moves it, and a change computed before a
 * claim must not move it back (that would grant a second probe in one period).
 *
 * @returns false when someone else wrote first (read again and recompute).
 * @example
 * if (!(await writeHold(current, next))) current = await readHold('erp');
 */
export const writeHold = async (current: HoldRecord, next: HoldRecord): Promise<boolean> => {
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = { ':seen': { N: String(current.version) } };
  const set: string[] = [];
  const remove: string[] = [];
  const fields: string[] = [...HOLD_FIELDS];
  if (next.held !== current.held) fields.push('probeAt');
  fields.forEach((field, index) => {
    names[`#f${index}`] = field;
    const value = next[field as keyof HoldRecord];
    if (value === undefined) remove.push(`#f${index}`);
    else {
      set.push(`#f${index} = :f${index}`);
      values[`:f${index}`] = marshall({ value }).value as AttributeValue;
    }
  });
  names['#version'] = 'version';
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: holdKey(current.downstream) } },
        UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ConditionExpression:
          current.version === 0 ? 'attribute_not_exists(#version) OR #version = :seen' : '#version = :seen',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * Claims the probe of the current period: moves `probeAt` to `nextProbeAt` only while the downstream is held and
 * `probeAt` has passed, so of any number of workers asking at once exactly one gets it.
 *
 * @returns the hold as written, or undefined when the probe was not ours (another worker's, or not held).
 * @example
 * const claimed = await claimProbeWrite('erp', now, '2026-11-27T03:00:30.000Z');
 */
export const claimProbeWrite = async (
  downstream: Downstream,
  now: Date,
  nextProbeAt: string,
): Promise<HoldRecord | undefined> => {
  let written: HoldRecord | undefined;
  const claimed = await conditionally(
    dynamoClient()
      .send(
        new UpdateItemCommand({
          TableName: recordsTable(),
          Key: { pk: { S: holdKey(downstream) } },
          UpdateExpression: 'SET #probeAt = :next',
          ConditionExpression: '#held = :true AND (attribute_not_exists(#probeAt) OR #probeAt <= :now)',
          ExpressionAttributeNames: { '#held': 'held', '#probeAt': 'probeAt' },
          ExpressionAttributeValues: {
            ':next': { S: nextProbeAt },
            ':now': { S: now.toISOString() },
            ':true': { BOOL: true },
          },
          ReturnValues: 'ALL_NEW',
        }),
      )
      .then((out) => {
        written = fromItem(downstream, out.Attributes);
      }),
  );
  return claimed ? written : undefined;
};
