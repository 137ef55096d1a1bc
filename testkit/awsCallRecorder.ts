import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './readBody.ts';

/** What an AWS call names: a table (and index), a queue, a secret or a parameter. */
export type CalledResource =
  | { kind: 'table'; name: string; index?: string }
  | { kind: 'queue'; url: string }
  | { kind: 'queueName'; name: string }
  | { kind: 'secret'; id: string }
  | { kind: 'parameter'; name: string }
  | { kind: 'parameterPath'; path: string }
  | { kind: 'eventBus'; name: string };

/**
 * One call as IAM authorises it: the action (`dynamodb:BatchGetItem`; SQS batch operations are authorised as
 * their single-message action) on one resource. One API call can need several (a BatchGetItem over two tables,
 * a TransactWriteItems of a Put and an Update).
 */
export interface AuthorisedAction {
  action: string;
  resource?: CalledResource;
  /** The request's values of the condition keys the roles here use (DynamoDB's), by key. */
  context?: Record<string, string[]>;
}

/** Words of DynamoDB's expressions that name no attribute. */
const EXPRESSION_WORDS = new Set(
  [
    'SET',
    'REMOVE',
    'ADD',
    'DELETE',
    'AND',
    'OR',
    'NOT',
    'BETWEEN',
    'IN',
    'if_not_exists',
    'list_append',
    'attribute_exists',
    'attribute_not_exists',
    'attribute_type',
    'begins_with',
    'contains',
    'size',
  ].map((w) => w.toLowerCase()),
);

/**
 * The top-level attribute names an expression touches: `#name` placeholders resolved, bare names as written,
 * `:values` and the expression's own words left out; a path counts as its first name.
 */
const expressionAttributes = (expression: unknown, names: Record<string, unknown>): string[] => {
  if (typeof expression !== 'string') return [];
  const found: string[] = [];
  for (const match of expression.matchAll(/(?<![\w:#.])(#?[A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()/g)) {
    const token = match[1];
    if (token.startsWith('#')) found.push(String(names[token] ?? token));
    else if (!EXPRESSION_WORDS.has(token.toLowerCase())) found.push(token);
  }
  return found;
};

/** The partition key of the records table, the one table of the template: `dynamodb:LeadingKeys` holds its values. */
const PARTITION_KEY = 'pk';

/** The partition key values an item operation names: its Key's or Item's, or every key of a batch's. */
const leadingKeys = (spec: Body): string[] =>
  [record(spec.Key), record(spec.Item), ...(Array.isArray(spec.Keys) ? spec.Keys.map(record) : [])].flatMap(
    (key) => {
      const value = record(key[PARTITION_KEY]);
      return typeof value.S === 'string' ? [value.S] : [];
    },
  );

/**
 * The condition keys IAM evaluates for a DynamoDB read or write (DynamoDB developer guide, "Using IAM policy
 * conditions for fine-grained access control"): `dynamodb:Attributes` (the key's and every expression's top-level
 * names), `dynamodb:Select` (as asked; a read naming no attributes asks for all of them), `dynamodb:ReturnValues`,
 * and `dynamodb:LeadingKeys` (the partition key values of the items an item operation names; a Query's or a Scan's
 * are not read here: the roles grant Query on indexes only, and no Scan, and guard neither by leading keys).
 */
const dynamodbContext = (operation: string, spec: Body): Record<string, string[]> => {
  const names = record(spec.ExpressionAttributeNames);
  const attributes = new Set<string>([
    ...Object.keys(record(spec.Key)),
    ...Object.keys(record(spec.Item)),
    ...(Array.isArray(spec.Keys) ? spec.Keys.flatMap((k) => Object.keys(record(k))) : []),
    ...[
      'ProjectionExpression',
      'KeyConditionExpression',
      'FilterExpression',
      'ConditionExpression',
      'UpdateExpression',
    ].flatMap((field) => expressionAttributes(spec[field], names)),
  ]);
  const context: Record<string, string[]> = { 'dynamodb:Attributes': [...attributes] };
  const reads = ['GetItem', 'BatchGetItem', 'Query', 'Scan'].includes(operation);
  const select =
    typeof spec.Select === 'string'
      ? spec.Select
      : spec.ProjectionExpression !== undefined
        ? 'SPECIFIC_ATTRIBUTES'
        : reads
          ? spec.IndexName === undefined
            ? 'ALL_ATTRIBUTES'
            : 'ALL_PROJECTED_ATTRIBUTES'
          : undefined;
  if (select) context['dynamodb:Select'] = [select];
  if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation))
    context['dynamodb:ReturnValues'] = [typeof spec.ReturnValues === 'string' ? spec.ReturnValues : 'NONE'];
  if (
    ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'].includes(
      operation,
    )
  )
    context['dynamodb:LeadingKeys'] = [...new Set(leadingKeys(spec))];
  return context;
};

/** One AWS API call a function made, as the recorder saw it. */
export interface RecordedCall {
  /** The access key id it was signed with: the recorder's tests give each function its own. */
  caller: string;
  /** The signing name of the credential scope: `dynamodb`, `sqs`, `secretsmanager`, `ssm`, ... */
  service: string;
  /** The API operation, e.g. `SendMessageBatch`. */
  operation: string;
  /** What IAM checks for it. Empty when the recorder cannot tell (see `problem`). */
  authorised: AuthorisedAction[];
  /** The HTTP status of the answer the caller got. */
  status: number;
  /** Why the call could not be read (an unknown operation or protocol): the tests fail on it. */
  problem?: string;
}

type Body = Record<string, unknown>;

const record = (value: unknown): Body =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** `Credential=<AKID>/<date>/<region>/<service>/aws4_request` of a Signature V4 Authorization header. */
export const signatureScope = (
  headers: IncomingHttpHeaders,
): { accessKeyId: string; service: string } | undefined => {
  const match = /Credential=([^/,\s]+)\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(
    String(headers.authorization ?? ''),
  );
  return match ? { accessKeyId: match[1], service: match[2] } : undefined;
};

/** SQS batch operations are authorised as the action of one message (AWS SQS API reference, "Permissions"). */
const SQS_BATCH_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/** TransactWriteItems / TransactGetItems are authorised per item as these actions. */
const TRANSACT_ITEM_ACTIONS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

const dynamodbActions = (operation: string, body: Body): AuthorisedAction[] => {
  const table = (name: unknown, index?: unknown): CalledResource => ({
    kind: 'table',
    name: String(name),
    ...(typeof index === 'string' ? { index } : {}),
  });
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.entries(record(body.RequestItems)).map(([name, spec]) => ({
      action: `dynamodb:${operation}`,
      resource: table(name),
      ...(operation === 'BatchGetItem' ? { context: dynamodbContext(operation, record(spec)) } : {}),
    }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const items = Array.isArray(body.TransactItems) ? body.TransactItems : [];
    return items.flatMap((item) =>
      Object.entries(record(item)).map(([kind, spec]) => {
        const action = TRANSACT_ITEM_ACTIONS[kind];
        if (!action) throw new Error(`${operation}: unknown item kind ${kind}`);
        return {
          action: `dynamodb:${action}`,
          resource: table(record(spec).TableName),
          context: dynamodbContext(action, record(spec)),
        };
      }),
    );
  }
  if (typeof body.TableName === 'string') {
    return [
      {
        action: `dynamodb:${operation}`,
        resource: table(body.TableName, body.IndexName),
        context: dynamodbContext(operation, body),
      },
    ];
  }
  if (operation === 'ListTables') return [{ action: 'dynamodb:ListTables' }];
  throw new Error(`DynamoDB ${operation}: no TableName (PartiQL and the like are not read by the recorder)`);
};

/** A queue named by its ARN: the queue of that name (the ARN's last part). */
const queueOfArn = (arn: unknown): CalledResource => ({
  kind: 'queueName',
  name: String(arn).split(':').pop() ?? '',
});

/**
 * SQS's message move task moves the messages with its caller's permissions: besides StartMessageMoveTask,
 * ReceiveMessage, DeleteMessage and GetQueueAttributes on the source (the dead-letter queue) and SendMessage on the
 * destination (SQS developer guide, "Amazon SQS API permissions: Actions and resource reference").
 */
const moveTaskActions = (body: Body): AuthorisedAction[] => {
  if (typeof body.SourceArn !== 'string') throw new Error('SQS StartMessageMoveTask: no SourceArn');
  // Without a destination the task sends to the queues the messages came from, which the recorder cannot know.
  if (typeof body.DestinationArn !== 'string') throw new Error('SQS StartMessageMoveTask: no DestinationArn');
  const source = queueOfArn(body.SourceArn);
  return [
    ...['StartMessageMoveTask', 'ReceiveMessage', 'DeleteMessage', 'GetQueueAttributes'].map((action) => ({
      action: `sqs:${action}`,
      resource: source,
    })),
    { action: 'sqs:SendMessage', resource: queueOfArn(body.DestinationArn) },
  ];
};

const sqsActions = (operation: string, body: Body): AuthorisedAction[] => {
  if (operation === 'StartMessageMoveTask') return moveTaskActions(body);
  const action = `sqs:${SQS_BATCH_ACTIONS[operation] ?? operation}`;
  if (typeof body.QueueUrl === 'string') return [{ action, resource: { kind: 'queue', url: body.QueueUrl } }];
  if (typeof body.QueueName === 'string') {
    return [{ action, resource: { kind: 'queueName', name: body.QueueName } }];
  }
  if (operation === 'ListQueues') return [{ action }];
  throw new Error(`SQS ${operation}: no QueueUrl`);
};

const secretsManagerActions = (operation: string, body: Body): AuthorisedAction[] => {
  const id = text(body.SecretId);
  if (!id) throw new Error(`Secrets Manager ${operation}: no SecretId`);
  return [{ action: `secretsmanager:${operation}`, resource: { kind: 'secret', id } }];
};

const ssmActions = (operation: string, body: Body): AuthorisedAction[] => {
  const action = `ssm:${operation}`;
  if (typeof body.Name === 'string') return [{ action, resource: { kind: 'parameter', name: body.Name } }];
  if (Array.isArray(body.Names)) {
    return body.Names.map((name) => ({ action, resource: { kind: 'parameter', name: String(name) } }));
  }
  if (typeof body.Path === 'string')
    return [{ action, resource: { kind: 'parameterPath', path: body.Path } }];
  throw new Error(`SSM ${operation}: no parameter name`);
};

/** PutEvents is authorised per entry on the entry's bus (its name or ARN; none: the account's default bus). */
const eventsActions = (operation: string, body: Body): AuthorisedAction[] => {
  if (operation !== 'PutEvents') throw new Error(`EventBridge ${operation}: not read by the recorder`);
  const entries = Array.isArray(body.Entries) ? body.Entries : [];
  if (entries.length === 0) throw new Error('EventBridge PutEvents: no Entries');
  return entries.map((entry) => ({
    action: 'events:PutEvents',
    resource: { kind: 'eventBus', name: text(record(entry).EventBusName) ?? 'default' },
  }));
};

/** CloudWatch's reads take no resource (IAM: `*`); the console reads GetMetricData only. */
const monitoringActions = (operation: string): AuthorisedAction[] => {
  if (operation !== 'GetMetricData') throw new Error(`CloudWatch ${operation}: not read by the recorder`);
  return [{ action: 'cloudwatch:GetMetricData' }];
};

/**
 * X-Ray's OTLP endpoint (`POST /v1/traces`, lib/observability/xraySpanExporter.ts): authorised as xray:PutSpans, and
 * xray:PutSpansForIndexing for the spans Transaction Search indexes (which of a request's spans it indexes is
 * X-Ray's choice, so every request may need it). No resource-level permission: `*`.
 */
const xrayActions = (operation: string): AuthorisedAction[] => {
  if (operation !== 'PutSpans') throw new Error(`xray ${operation}: not read`);
  return [{ action: 'xray:PutSpans' }, { action: 'xray:PutSpansForIndexing' }];
};

const READERS: Record<string, (operation: string, body: Body) => AuthorisedAction[]> = {
  xray: xrayActions,
  dynamodb: dynamodbActions,
  monitoring: monitoringActions,
  sqs: sqsActions,
  secretsmanager: secretsManagerActions,
  ssm: ssmActions,
  events: eventsActions,
};

/** One entry of a PutEvents call the recorder took (EventBridge's request fields). */
export interface PutEventsEntry {
  EventBusName?: string;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Time?: number | string;
}

/** One StartMessageMoveTask the recorder took (SQS's request fields). */
export interface MoveTask {
  SourceArn: string;
  DestinationArn?: string;
}

/**
 * Reads one AWS request: the operation from `X-Amz-Target` (JSON protocol) or `Action=` (SQS's query
 * protocol), and from the body the resources IAM authorises it on.
 */
export const readAwsRequest = (
  service: string,
  headers: IncomingHttpHeaders,
  body: string,
  path = '/',
): { operation: string; authorised: AuthorisedAction[]; problem?: string } => {
  const target = text(headers['x-amz-target']);
  let operation = target ? (target.split('.').pop() ?? '') : '';
  let fields: Body = {};
  if (service === 'xray' && path === '/v1/traces') {
    // OTLP/HTTP, not an AWS protocol: the operation is the path's.
    operation = 'PutSpans';
  } else if (target) {
    try {
      fields = record(body ? JSON.parse(body) : {});
    } catch {
      return { operation, authorised: [], problem: 'the body is not JSON' };
    }
  } else {
    const form = new URLSearchParams(body);
    operation = form.get('Action') ?? '';
    fields = Object.fromEntries(form);
  }
  if (!operation) return { operation: '?', authorised: [], problem: 'no X-Amz-Target and no Action' };
  const reader = READERS[service];
  if (!reader) {
    return {
      operation,
      authorised: [],
      problem: `service ${service} is not read by testkit/awsCallRecorder.ts: add a reader`,
    };
  }
  try {
    return { operation, authorised: reader(operation, fields) };
  } catch (error) {
    return { operation, authorised: [], problem: (error as Error).message };
  }
};

/** A fault the recorder answers instead of forwarding: a 500, as AWS answers under an internal error. */
interface Fault {
  caller: string;
  operation: string;
}

export interface AwsCallRecorderOptions {
  /** Where DynamoDB and SQS calls go on to (dynalite, fauxqs). */
  forward: { dynamodb: string; sqs: string };
  /** Secrets Manager secrets the recorder itself serves, by name. */
  secrets?: Record<string, string>;
  /** SSM parameters the recorder itself serves (as SecureStrings), by name. */
  parameters?: Record<string, string>;
}

const json = (status: number, body: unknown, contentType = 'application/x-amz-json-1.1') => ({
  status,
  headers: { 'content-type': contentType, 'x-amzn-requestid': crypto.randomUUID() },
  body: JSON.stringify(body),
});

/**
 * A real HTTP endpoint in front of the local AWS stand-ins that records every call made through it: who
 * signed it (the access key id of the SigV4 credential scope), the service, the operation and the resources
 * IAM authorises it on. DynamoDB and SQS calls go on to dynalite and fauxqs; Secrets Manager and SSM Parameter
 * Store are answered here from the values given, CloudWatch's GetMetricData with empty series, EventBridge's
 * PutEvents is taken (kept in `putEvents`), X-Ray's OTLP spans (`/v1/traces`) are taken, and so is
 * SQS's StartMessageMoveTask (`moveTasks`: fauxqs has none); any other
 * service is recorded and refused. Point every
 * `AWS_ENDPOINT_URL*` of a process at it (and its queue URLs: fauxqs finds a queue by the URL's last segment).
 *
 * @example
 * const recorder = await startAwsCallRecorder({ forward: { dynamodb, sqs }, parameters: { '/x': 'v' } });
 * // ... run code signed with AWS_ACCESS_KEY_ID=salesRegistration ...
 * recorder.calls.filter((c) => c.caller === 'salesRegistration');
 */
export const startAwsCallRecorder = async (options: AwsCallRecorderOptions) => {
  const calls: RecordedCall[] = [];
  const faults: Fault[] = [];
  const putEvents: PutEventsEntry[] = [];
  const moveTasks: MoveTask[] = [];
  const region = 'eu-west-1';
  const account = '000000000000';

  const answerLocally = (service: string, operation: string, body: Body) => {
    if (service === 'secretsmanager' && operation === 'GetSecretValue') {
      const name = String(body.SecretId);
      const value = options.secrets?.[name];
      if (value === undefined) {
        return json(400, {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret.",
        });
      }
      return json(200, {
        ARN: `arn:aws:secretsmanager:${region}:${account}:secret:${name}-AbCdEf`,
        Name: name,
        SecretString: value,
        VersionId: '00000000-0000-0000-0000-000000000001',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_700_000_000,
      });
    }
    if (service === 'ssm' && operation === 'GetParameter') {
      const name = String(body.Name);
      const value = options.parameters?.[name];
      if (value === undefined) return json(400, { __type: 'ParameterNotFound', message: name });
      return json(200, {
        Parameter: {
          Name: name,
          Type: 'SecureString',
          Value: value,
          Version: 1,
          LastModifiedDate: 1_700_000_000,
          ARN: `arn:aws:ssm:${region}:${account}:parameter${name.startsWith('/') ? '' : '/'}${name}`,
          DataType: 'text',
        },
      });
    }
    if (service === 'monitoring' && operation === 'GetMetricData') {
      // No metric is stored here: every series asked for, empty.
      const queries = (Array.isArray(body.MetricDataQueries) ? body.MetricDataQueries : []) as {
        Id?: string;
      }[];
      return json(200, {
        MetricDataResults: queries.map((q) => ({
          Id: q.Id,
          Timestamps: [],
          Values: [],
          StatusCode: 'Complete',
        })),
        Messages: [],
      });
    }
    if (service === 'events' && operation === 'PutEvents') {
      // EventBridge takes every entry (a bus that refuses is a fault injected with `fail`).
      const entries = (Array.isArray(body.Entries) ? body.Entries : []) as PutEventsEntry[];
      putEvents.push(...entries);
      return json(200, {
        FailedEntryCount: 0,
        Entries: entries.map(() => ({ EventId: crypto.randomUUID() })),
      });
    }
    if (service === 'xray' && operation === 'PutSpans') {
      // X-Ray takes every span (OTLP's answer: no partial success).
      return json(200, {}, 'application/json');
    }
    return json(400, {
      __type: 'UnknownOperationException',
      message: `${service} ${operation} is not served by the test recorder`,
    });
  };

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const body = raw.toString('utf8');
    const scope = signatureScope(req.headers);
    const service = scope?.service ?? '?';
    const { operation, authorised, problem } = readAwsRequest(service, req.headers, body, req.url);
    const call: RecordedCall = {
      caller: scope?.accessKeyId ?? '(unsigned)',
      service,
      operation,
      authorised,
      status: 0,
      ...(scope ? (problem ? { problem } : {}) : { problem: 'no Signature V4 Authorization header' }),
    };
    calls.push(call);

    let answer: { status: number; headers: Record<string, string>; body: string | Buffer };
    if (faults.some((f) => f.caller === call.caller && f.operation === operation)) {
      answer = json(500, { __type: 'InternalError', message: 'injected by the test recorder' });
    } else if (service === 'sqs' && operation === 'StartMessageMoveTask' && !problem) {
      // fauxqs has no message move task: the recorder takes it (kept in `moveTasks`), as SQS would start it.
      moveTasks.push(JSON.parse(body) as MoveTask);
      answer = json(200, { TaskHandle: crypto.randomUUID() }, 'application/x-amz-json-1.0');
    } else if (service === 'dynamodb' || service === 'sqs') {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
      ) as Record<string, string>;
      const forwarded = await fetch(`${options.forward[service]}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : raw,
      });
      answer = {
        status: forwarded.status,
        headers: Object.fromEntries(
          [...forwarded.headers].filter(
            ([k]) => !['content-length', 'connection', 'transfer-encoding'].includes(k),
          ),
        ),
        body: Buffer.from(await forwarded.arrayBuffer()),
      };
    } else {
      let fields: Body = {};
      try {
        fields = record(JSON.parse(body || '{}'));
      } catch {
        // answered as unknown below
      }
      answer = answerLocally(service, operation, fields);
    }
    call.status = answer.status;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    /** The entries of every PutEvents the recorder answered (not those it failed). */
    putEvents,
    /** The message move tasks the recorder started (SQS's StartMessageMoveTask requests). */
    moveTasks,
    /** Answers every `operation` signed by `caller` with a 500 until healed (the call is still recorded). */
    fail: (caller: string, operation: string) => {
      faults.push({ caller, operation });
    },
    heal: () => {
      faults.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export type AwsCallRecorder = Awaited<ReturnType<typeof startAwsCallRecorder>>;
