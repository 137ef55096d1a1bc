import { dynamoClient } from '../aws/clients.ts';
import { QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';

/**
 * The sparse, keys-only global secondary index of records by the id SAP or Salesforce gave them (`downstreamId`: an
 * SAP document number, a Salesforce case id), present only once a record is delivered with one. Nothing writes an
 * attribute for it: a record's own `downstreamId` is its key, so it costs one index write when the record is
 * delivered and one when it expires, and no other write of the record touches it.
 */
export const DOWNSTREAM_ID_INDEX = 'downstreamId';

/** More records than this under one downstream id are not looked for (an id names one record, two at most). */
const MAX_IDS = 20;

/**
 * The ids of the records SAP or Salesforce answered with this id (normally one), through the `downstreamId` index;
 * no table scan.
 *
 * @example
 * await recordIdsByDownstreamId('49000001') // ['3f0c…']
 */
export const recordIdsByDownstreamId = async (downstreamId: string): Promise<string[]> => {
  const out = await dynamoClient().send(
    new QueryCommand({
      TableName: recordsTable(),
      IndexName: DOWNSTREAM_ID_INDEX,
      KeyConditionExpression: 'downstreamId = :id',
      ExpressionAttributeValues: { ':id': { S: downstreamId } },
      Select: 'SPECIFIC_ATTRIBUTES',
      ProjectionExpression: 'pk',
      Limit: MAX_IDS,
    }),
  );
  return (out.Items ?? []).map((item) => item.pk?.S ?? '').filter(Boolean);
};
