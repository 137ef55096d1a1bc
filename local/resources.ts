/**
 * Creates, on the local emulators, the queues and tables serverless.yml deploys (its CloudFormation
 * `resources`), and maps provider.environment's `{Ref: X}` values to the local URLs / names.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from './aws.ts';
import type { LocalRule } from './eventBus.ts';
import { checkEventPattern } from './eventPattern.ts';
import { localRegion } from './project.ts';
import type { CfnResource, ResolvedServerlessConfig } from './serverlessConfig.ts';

export interface LocalQueue {
  name: string;
  url: string;
  arn: string;
}

export interface LocalTable {
  name: string;
  arn: string;
}

/** An EventBridge bus of the stack: locally only a name, which the local event bus (eventBus.ts) answers to. */
export interface LocalBus {
  name: string;
  arn: string;
}

export interface LocalResources {
  /** By CloudFormation logical id, e.g. `SalesRegistrationQueue`. */
  queues: Record<string, LocalQueue>;
  /** By CloudFormation logical id, e.g. `RecordsTable`. */
  tables: Record<string, LocalTable>;
  /** By CloudFormation logical id, e.g. `EventBus`. */
  buses: Record<string, LocalBus>;
  /** The enabled EventBridge rules (`AWS::Events::Rule`), their targets the local queues, for the local bus. */
  rules: LocalRule[];
  /**
   * provider.environment variables whose value is a CloudFormation reference (`{Ref: X}`,
   * `{Fn::GetAtt: [X, Arn]}`), resolved to the local resource, e.g. SALES_REGISTRATION_QUEUE_URL.
   */
  env: Record<string, string>;
}

export async function createLocalResources(
  config: ResolvedServerlessConfig,
  endpoints: { sqs: string; dynamodb: string },
): Promise<LocalResources> {
  const resources = config.resources?.Resources ?? {};
  const [queues, tables] = await Promise.all([
    createQueues(resources, endpoints.sqs),
    createTables(resources, endpoints.dynamodb),
  ]);
  const buses = localBuses(resources);
  return {
    queues,
    tables,
    buses,
    rules: localRules(resources, { queues, tables, buses }),
    env: environmentReferences(config, { queues, tables, buses }),
  };
}

/**
 * The stack's enabled rules as the local bus routes them. A target that is no local queue fails loudly: npm start
 * would otherwise drop what AWS delivers.
 */
function localRules(
  resources: Record<string, CfnResource>,
  local: Pick<LocalResources, 'queues' | 'tables' | 'buses'>,
): LocalRule[] {
  const rules: LocalRule[] = [];
  for (const [id, { Type, Properties = {} }] of Object.entries(resources)) {
    if (Type !== 'AWS::Events::Rule' || Properties.State === 'DISABLED') continue;
    const bus =
      Properties.EventBusName === undefined
        ? 'default'
        : resolveIntrinsic(Properties.EventBusName, local, `${id}.EventBusName`);
    const targets = (
      (Properties.Targets ?? []) as { Arn?: unknown; SqsParameters?: { MessageGroupId?: unknown } }[]
    ).map((target, index) => {
      const arn = resolveIntrinsic(target.Arn, local, `${id}.Targets[${index}].Arn`);
      const queue = Object.values(local.queues).find((candidate) => candidate.arn === arn);
      if (!queue) throw new Error(`${id}.Targets[${index}]: ${String(arn)} is no local queue`);
      // The target's static group (SqsParameters), as EventBridge sends it: the fair queue's tenant.
      const group = target.SqsParameters?.MessageGroupId;
      return { queueUrl: queue.url, ...(typeof group === 'string' ? { messageGroupId: group } : {}) };
    });
    rules.push({
      name: id,
      bus: String(bus),
      pattern: checkEventPattern(Properties.EventPattern, `${id}.EventPattern`),
      targets,
    });
  }
  return rules;
}

/** The stack's event buses by logical id, named as on AWS (their Name property). */
function localBuses(resources: Record<string, CfnResource>): Record<string, LocalBus> {
  const buses: Record<string, LocalBus> = {};
  for (const [id, { Type, Properties = {} }] of Object.entries(resources)) {
    if (Type !== 'AWS::Events::EventBus') continue;
    const name = typeof Properties.Name === 'string' ? Properties.Name : id;
    buses[id] = { name, arn: `arn:aws:events:${localRegion}:000000000000:event-bus/${name}` };
  }
  return buses;
}

/**
 * What createLocalResources will report as `env`, without creating anything: fauxqs (with an empty
 * `host`) names a queue `<endpoint>/000000000000/<QueueName>`, and a table is its TableName. Lets offline
 * start while `osls print` still runs; the caller compares it with the real `env` afterwards.
 */
export function predictLocalEnv(
  config: ResolvedServerlessConfig,
  sqsEndpoint: string,
): Record<string, string> {
  const queues: Record<string, LocalQueue> = {};
  const tables: Record<string, LocalTable> = {};
  for (const [id, { Type, Properties = {} }] of Object.entries(config.resources?.Resources ?? {})) {
    const name = typeof Properties.QueueName === 'string' ? Properties.QueueName : id;
    if (Type === 'AWS::SQS::Queue') {
      queues[id] = {
        name,
        url: `${sqsEndpoint}/000000000000/${name}`,
        arn: `arn:aws:sqs:${localRegion}:000000000000:${name}`,
      };
    } else if (Type === 'AWS::DynamoDB::Table') {
      const table = typeof Properties.TableName === 'string' ? Properties.TableName : id;
      // dynalite names the region of this process's environment when it creates the table.
      const tableRegion = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
      tables[id] = { name: table, arn: `arn:aws:dynamodb:${tableRegion}:000000000000:table/${table}` };
    }
  }
  const buses = localBuses(config.resources?.Resources ?? {});
  return environmentReferences(config, { queues, tables, buses });
}

/** provider.environment values that are CloudFormation references, resolved to the local resources. */
function environmentReferences(
  config: ResolvedServerlessConfig,
  local: Pick<LocalResources, 'queues' | 'tables' | 'buses'>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.provider.environment ?? {})) {
    if (value !== null && typeof value === 'object') {
      env[name] = String(resolveIntrinsic(value, local, `provider.environment.${name}`));
    }
  }
  return env;
}

async function createQueues(resources: Record<string, CfnResource>, endpoint: string) {
  const pending = new Map(Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue'));
  const queues: Record<string, LocalQueue> = {};
  if (pending.size === 0) return queues;
  const sqs = new SQSClient(localClientConfig(endpoint));
  try {
    // Queues that others reference (dead-letter queues in RedrivePolicy) must exist first: create in
    // rounds, each round every queue whose references are all resolved.
    while (pending.size > 0) {
      const ready = [...pending].filter(([, r]) => referencesOf(r.Properties).every((id) => id in queues));
      if (ready.length === 0) {
        const missing = [...pending].map(([id, r]) => `${id} -> ${referencesOf(r.Properties).join(', ')}`);
        throw new Error(`SQS queues reference unknown or circular resources: ${missing.join('; ')}`);
      }
      await Promise.all(
        ready.map(async ([id, resource]) => {
          pending.delete(id);
          queues[id] = await createQueue(sqs, id, resource, { queues, tables: {}, buses: {} });
        }),
      );
    }
  } finally {
    sqs.destroy();
  }
  return queues;
}

async function createQueue(
  sqs: SQSClient,
  id: string,
  resource: CfnResource,
  local: Pick<LocalResources, 'queues' | 'tables' | 'buses'>,
) {
  const { QueueName, Tags, ...properties } = resource.Properties ?? {};
  const name = typeof QueueName === 'string' ? QueueName : id;
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) {
    const resolved = resolveIntrinsic(value, local, `${id}.${key}`);
    attributes[key] = typeof resolved === 'string' ? resolved : JSON.stringify(resolved);
  }
  // Local only: a webhook message in flight when npm start is killed comes back after the queue's visibility
  // timeout, as on AWS (360 s); the fault campaign, which kills npm start on purpose, waits for it less long.
  const webhookVisibility = process.env.LOCAL_WEBHOOK_VISIBILITY_SECONDS;
  if (id === 'WebhookQueue' && webhookVisibility && /^\d+$/.test(webhookVisibility))
    attributes.VisibilityTimeout = webhookVisibility;
  const tags = Array.isArray(Tags)
    ? Object.fromEntries((Tags as { Key: string; Value: string }[]).map((t) => [t.Key, String(t.Value)]))
    : undefined;
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes, tags }),
  );
  if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no QueueUrl`);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { name, url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
}

/** CreateTable parameters that a CloudFormation AWS::DynamoDB::Table shares with the API. */
const tableProperties = [
  'AttributeDefinitions',
  'KeySchema',
  'BillingMode',
  'ProvisionedThroughput',
  'GlobalSecondaryIndexes',
  'LocalSecondaryIndexes',
] as const;

async function createTables(resources: Record<string, CfnResource>, endpoint: string) {
  const tables: Record<string, LocalTable> = {};
  const definitions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::DynamoDB::Table');
  if (definitions.length === 0) return tables;
  const dynamodb = new DynamoDBClient(localClientConfig(endpoint));
  try {
    await Promise.all(
      definitions.map(async ([id, { Properties = {} }]) => {
        const name = typeof Properties.TableName === 'string' ? Properties.TableName : id;
        tables[id] = { name, arn: await ensureTable(dynamodb, name, Properties) };
      }),
    );
  } finally {
    dynamodb.destroy();
  }
  return tables;
}

/**
 * Waits until a table just created is ACTIVE, as CloudFormation does before it reports the table created: dynalite
 * answers CreateTable with CREATING and turns the table ACTIVE a moment later (on a busy machine, after a write
 * sent right away has already been refused with ResourceNotFoundException).
 */
async function untilActive(dynamodb: DynamoDBClient, name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline)
      throw new Error(`local table ${name} still ${Table?.TableStatus} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function ensureTable(dynamodb: DynamoDBClient, name: string, properties: Record<string, unknown>) {
  const input: Record<string, unknown> = { TableName: name };
  for (const key of tableProperties) if (properties[key] !== undefined) input[key] = properties[key];
  let arn: string | undefined;
  try {
    // The store persists on disk: the table usually exists already.
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
    const want = JSON.stringify(input.KeySchema);
    if (want && JSON.stringify(Table?.KeySchema) !== want) {
      throw new Error(
        `local table ${name} has key schema ${JSON.stringify(Table?.KeySchema)} but serverless.yml says ${want}: ` +
          'delete the local data directory (or set DATA_DIR) to recreate it',
      );
    }
    const indexes = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    const missing = ((input.GlobalSecondaryIndexes ?? []) as { IndexName: string }[])
      .map((index) => index.IndexName)
      .filter((index) => !indexes.has(index));
    if (missing.length > 0) {
      // dynalite cannot add an index to an existing table.
      throw new Error(
        `local table ${name} lacks the index ${missing.join(', ')} that serverless.yml declares (it was made by an ` +
          'older version): delete the local data directory (or set DATA_DIR) to recreate it',
      );
    }
    arn = Table?.TableArn;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    const { TableDescription } = await dynamodb.send(
      new CreateTableCommand(input as unknown as CreateTableCommandInput),
    );
    arn = TableDescription?.TableArn;
    await untilActive(dynamodb, name);
    const ttl = properties.TimeToLiveSpecification as
      | { AttributeName?: string; Enabled?: boolean }
      | undefined;
    if (ttl?.AttributeName) {
      try {
        await dynamodb.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: ttl.Enabled ?? true },
          }),
        );
      } catch {
        // dynalite has no UpdateTimeToLive (UnknownOperationException); expiry does not matter locally.
      }
    }
  }
  return arn ?? '';
}

/** Logical ids a property value refers to through `Ref` / `Fn::GetAtt`. */
function referencesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencesOf);
  if (value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === 'string') return [record.Ref];
  const getAtt = record['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
  return Object.values(record).flatMap(referencesOf);
}

/**
 * Replaces `{Ref: X}` (queue → URL, table → name) and `{Fn::GetAtt: [X, Arn | QueueName | QueueUrl]}` with
 * the local values; anything else is returned as is. Unknown references fail loudly with `where`.
 */
function resolveIntrinsic(
  value: unknown,
  local: Pick<LocalResources, 'queues' | 'tables' | 'buses'>,
  where: string,
): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsic(v, local, where));
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if ('Ref' in record) {
    const id = String(record.Ref);
    const resolved = local.queues[id]?.url ?? local.tables[id]?.name ?? local.buses[id]?.name;
    if (resolved === undefined) throw new Error(`${where}: {Ref: ${id}} is no local queue, table or bus`);
    return resolved;
  }
  if ('Fn::GetAtt' in record) {
    const [id, attribute] = record['Fn::GetAtt'] as [string, string];
    const queue = local.queues[id];
    const table = local.tables[id];
    const bus = local.buses[id];
    const resolved =
      attribute === 'Arn'
        ? (queue?.arn ?? table?.arn ?? bus?.arn)
        : attribute === 'QueueName'
          ? queue?.name
          : attribute === 'QueueUrl'
            ? queue?.url
            : undefined;
    if (resolved === undefined)
      throw new Error(`${where}: {Fn::GetAtt: [${id}, ${attribute}]} has no local value`);
    return resolved;
  }
  const intrinsic = Object.keys(record).find((key) => key.startsWith('Fn::'));
  if (intrinsic) throw new Error(`${where}: ${intrinsic} is not supported by the local runner`);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolveIntrinsic(v, local, where)]));
}
