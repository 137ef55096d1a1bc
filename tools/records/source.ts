import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { serviceReader, type TableReader } from '../../lib/store/statusIndex.ts';
import { defaultDataDir } from '../../local/project.ts';
import { NoServiceError } from './errors.ts';

/** What the running `npm start` writes to `<data dir>/runner.json` and this script reads of it. */
interface RunnerInfo {
  dynamoEndpoint: string;
  env: Record<string, string>;
}

/** Where the records are read: a reader, the table it reads, and where that is (for messages). */
export interface RecordsSource {
  reader: TableReader;
  table: string;
  where: string;
  close(): void;
}

/**
 * The running local service's table, through the service's own client pointed at its DynamoDB endpoint (as
 * `npm run redrive` does). Sets RECORDS_TABLE and the endpoint in process.env for the look-ups.
 *
 * @throws NoServiceError when no `npm start` is running (no runner.json).
 * @example
 * const { reader } = await localSource();
 */
export const localSource = async (env = process.env): Promise<RecordsSource> => {
  const infoFile = join(env.DATA_DIR ? env.DATA_DIR : defaultDataDir(), 'runner.json');
  const info = JSON.parse(await readFile(infoFile, 'utf8').catch(() => 'null')) as RunnerInfo | null;
  if (!info)
    throw new NoServiceError(
      `no running local service (${infoFile} is missing): start it with npm start, or pass --stage`,
    );
  const table = info.env.RECORDS_TABLE;
  Object.assign(process.env, {
    AWS_REGION: info.env.AWS_REGION,
    AWS_ACCESS_KEY_ID: info.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: info.env.AWS_SECRET_ACCESS_KEY,
    AWS_ENDPOINT_URL_DYNAMODB: info.dynamoEndpoint,
    RECORDS_TABLE: table,
  });
  return {
    reader: serviceReader(),
    table,
    where: `the local service (${info.dynamoEndpoint})`,
    close: () => {},
  };
};

/**
 * An AWS stage's table `dealer-gateway-<stage>-records`, through the SDK's DynamoDB client (credentials as the AWS
 * CLI finds them: environment, profile, SSO). Sets RECORDS_TABLE in process.env for the look-ups.
 *
 * @example
 * const source = awsSource('prod', 'eu-west-1');
 */
export const awsSource = (stage: string, region: string): RecordsSource => {
  const table = `dealer-gateway-${stage}-records`;
  process.env.RECORDS_TABLE = table;
  const client = new DynamoDBClient({ region });
  return {
    reader: {
      query: (input) => client.send(new QueryCommand(input)),
      getItem: (input) => client.send(new GetItemCommand(input)),
    },
    table,
    where: `${table} (${region})`,
    close: () => client.destroy(),
  };
};
