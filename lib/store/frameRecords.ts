import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { caseFrameKeyOf, frameKeyOf } from '../records/keys.ts';
import type { StatusRecord } from '../records/types.ts';
import { recordsTable } from '../settings/settings.ts';
import type { Item } from './table.ts';

/**
 * The sparse global secondary index of sales records by owner and frame number: partition key `frameKey`
 * (`<owner>#<FrameNum>`, written by intake on sales records), sort key `acceptedAt`; cases that name a frame number
 * are in it too, under keys of their own (`case:#<FRAMENO>`, lib/records/keys.ts caseFrameKeyOf) that no sales
 * look-up reads. It projects what a
 * status look-up shows (INCLUDE), so one Query answers a look-up without reading the records, and the index holds
 * no personal data of the record.
 */
export const FRAME_INDEX = 'frame';

/** The attributes the `frame` index projects besides its keys and the table's `pk`: a status view's. */
export const FRAME_INDEX_ATTRIBUTES = ['id', 'status', 'attempts', 'updatedAt', 'downstreamId', 'error'];

/** What the `frame` index holds of a status record. */
export type FrameIndexEntry = Pick<
  StatusRecord,
  'id' | 'status' | 'attempts' | 'acceptedAt' | 'updatedAt' | 'downstreamId' | 'error'
>;

/**
 * An owner's sales records with this frame number, newest `acceptedAt` first, page by page through the `frame`
 * index (an eventually consistent read, as every index read is); no table scan.
 *
 * @example
 * const records = await salesRecordsByFrame('example-dealer', 'TESTFRAME00000001');
 */
export const salesRecordsByFrame = async (owner: string, frameNum: string): Promise<FrameIndexEntry[]> => {
  const entries: FrameIndexEntry[] = [];
  let startKey: Item | undefined;
  do {
    const out = await dynamoClient().send(
      new QueryCommand({
        TableName: recordsTable(),
        IndexName: FRAME_INDEX,
        KeyConditionExpression: 'frameKey = :frameKey',
        ExpressionAttributeValues: { ':frameKey': { S: frameKeyOf(owner, frameNum) } },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) {
      const { pk: _pk, frameKey: _frameKey, ...entry } = unmarshall(item);
      entries.push(entry as FrameIndexEntry);
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return entries;
};

/** What the console's search reads of a `frame` index entry: a list row's attributes, nothing else. */
const FRAME_ROW_ATTRIBUTES = ['pk', 'frameKey', 'acceptedAt', 'id', 'status', 'attempts', 'updatedAt'];

/** A `frame` index entry as a list row is made of it. */
export type FrameRowEntry = Pick<
  StatusRecord,
  'id' | 'status' | 'attempts' | 'acceptedAt' | 'updatedAt' | 'frameKey'
>;

/**
 * Up to `limit` of an owner's sales records with this frame number, newest first: one Query of the `frame` index
 * naming the attributes it reads (the console's role reads named attributes only); no table scan.
 *
 * @example
 * await frameRowEntries('example-dealer', 'TESTFRAME00000001', 100) // [{ id: '3f0c…', status: 'delivered', … }]
 */
export const frameRowEntries = async (
  owner: string,
  frameNum: string,
  limit: number,
): Promise<FrameRowEntry[]> => {
  const names = Object.fromEntries(FRAME_ROW_ATTRIBUTES.map((name, i) => [`#a${i}`, name]));
  const out = await dynamoClient().send(
    new QueryCommand({
      TableName: recordsTable(),
      IndexName: FRAME_INDEX,
      KeyConditionExpression: '#a1 = :frameKey',
      ExpressionAttributeValues: { ':frameKey': { S: frameKeyOf(owner, frameNum) } },
      Select: 'SPECIFIC_ATTRIBUTES',
      ProjectionExpression: Object.keys(names).join(', '),
      ExpressionAttributeNames: names,
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => {
    const { pk: _pk, ...entry } = unmarshall(item);
    return entry as FrameRowEntry;
  });
};

/**
 * The ids of up to `limit` cases naming this frame number (any owner), newest first: one Query of the `frame` index
 * reading its keys only (the index projects no owner; the caller reads the rows by id). Cases accepted before cases
 * carried a `frameKey` are not in it.
 *
 * @example
 * await caseIdsByFrame('JH2PC4000NK000123', 200) // ['3f0c…', …]
 */
export const caseIdsByFrame = async (frameNo: string, limit: number): Promise<string[]> => {
  const out = await dynamoClient().send(
    new QueryCommand({
      TableName: recordsTable(),
      IndexName: FRAME_INDEX,
      KeyConditionExpression: '#key = :frameKey',
      ExpressionAttributeValues: { ':frameKey': { S: caseFrameKeyOf(frameNo) } },
      Select: 'SPECIFIC_ATTRIBUTES',
      ProjectionExpression: '#pk',
      ExpressionAttributeNames: { '#key': 'frameKey', '#pk': 'pk' },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).flatMap((item) => (item.pk?.S ? [item.pk.S] : []));
};
