import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localClientConfig } from '../local/aws.ts';
import { isolatedAws } from './isolatedAws.ts';

/**
 * isolatedAws, ready for writes at once: queues and a table of their own (for one test, not one file), waiting for
 * the table to be ACTIVE (dynalite answers CreateTable before the table takes writes).
 *
 * @example
 * beforeEach(async () => { aws = await freshAws(); });
 */
export const freshAws = async () => {
  const aws = await isolatedAws();
  const dynamodb = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
  try {
    const TableName = aws.resources.tables.RecordsTable.name;
    while ((await dynamodb.send(new DescribeTableCommand({ TableName }))).Table?.TableStatus !== 'ACTIVE')
      await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    dynamodb.destroy();
  }
  return aws;
};
