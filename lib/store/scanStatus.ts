import { dynamoClient } from '../aws/clients.ts';
import { ScanCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../config.ts';
import type { RecordKind } from '../types.ts';
import { fromItem } from './statusRecords.ts';
import type { RecordStatus, StatusRecord } from './types.ts';

/**
 * Every status record of a kind in a status, page by page. A full scan: for the local runner's restart and for
 * redrive, which are rare operator actions, not for request paths.
 */
export async function* scanStatusRecords(
  status: RecordStatus,
  kind?: RecordKind,
): AsyncGenerator<StatusRecord> {
  let startKey: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const out = await dynamoClient().send(
      new ScanCommand({
        TableName: recordsTable(),
        FilterExpression: kind ? '#status = :status AND #kind = :kind' : '#status = :status',
        ExpressionAttributeNames: { '#status': 'status', ...(kind ? { '#kind': 'kind' } : {}) },
        ExpressionAttributeValues: { ':status': { S: status }, ...(kind ? { ':kind': { S: kind } } : {}) },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) yield fromItem(item);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
