/**
 * Events and webhooks in the packaged CloudFormation template (`npm run package -- --stage ci`): the bus, the
 * table's `status`, `events` and `purge` indexes (keys, projections, no personal data), and for each client of
 * config/clients.json with a webhook its connection, API destination, rule, retries, dead-letter queue, the queue
 * policy and the invoke role, all scoped to that client; nothing for a client without a webhook; the functions'
 * new permissions without wildcards.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import clients from '../../config/clients.json' with { type: 'json' };
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED, WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { packagedTemplate, type Resource, type Template } from '../support/packagedTemplate.ts';

type Statement = {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Principal?: unknown;
  Condition?: unknown;
};

let template: Template;
let outDir: string;
const resources = () => template.Resources;
const ofType = (type: string) => Object.entries(resources()).filter(([, r]) => r.Type === type);
const getAtt = (id: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [id, attribute] });
const listOf = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const statementsOf = (roleId: string): Statement[] =>
  (resources()[roleId].Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
const config = clients as ClientsConfig;
const withWebhook = config.clients.filter((c) => c.webhook);
const withoutWebhook = config.clients.filter((c) => !c.webhook);
const pascal = (name: string) => name.replace(/(^|-+)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

/** Attributes of a stored status record that carry personal data: the normalised record (and its copies). */
const PERSONAL_ATTRIBUTES = ['record'];

beforeAll(async () => {
  // Prepare: `npm run package` as a user runs it, without AWS credentials (once for all deploy tests).
  ({ template, dir: outDir } = await packagedTemplate());
}, 180_000);

afterAll(() => rm(outDir, { recursive: true, force: true }));

describe('the event bus and the look-up indexes', () => {
  it('has one event bus of the stack, whose name the functions get as EVENT_BUS_NAME', () => {
    // Act
    const buses = ofType('AWS::Events::EventBus');
    // Assess
    expect(buses.map(([id, r]) => [id, r.Properties.Name])).toEqual([['EventBus', 'dealer-gateway-ci']]);
    for (const [id, fn] of ofType('AWS::Lambda::Function')) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.EVENT_BUS_NAME, id).toEqual({ Ref: 'EventBus' });
    }
  });

  it('indexes status records by state, by unpublished events and by personal data to remove, projecting no personal data', () => {
    // Act
    const [[, table]] = ofType('AWS::DynamoDB::Table');
    const indexes = table.Properties.GlobalSecondaryIndexes as {
      IndexName: string;
      KeySchema: { AttributeName: string; KeyType: string }[];
      Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
    }[];
    const byName = Object.fromEntries(indexes.map((i) => [i.IndexName, i]));
    const keys = (name: string) => byName[name].KeySchema.map((k) => `${k.KeyType} ${k.AttributeName}`);
    // Assess
    expect(keys('status')).toEqual(['HASH statusKey', 'RANGE acceptedAt']);
    expect(byName.status.Projection).toEqual({
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: [
        'id',
        'kind',
        'status',
        'owner',
        'dealer',
        'frameKey',
        'attempts',
        'updatedAt',
        'downstreamId',
        'error',
      ],
    });
    expect(keys('events')).toEqual(['HASH eventsKind', 'RANGE eventsDueAt']);
    expect(byName.events.Projection).toEqual({ ProjectionType: 'KEYS_ONLY' });
    expect(keys('purge')).toEqual(['HASH purgeKind', 'RANGE purgeAt']);
    expect(byName.purge.Projection).toEqual({ ProjectionType: 'KEYS_ONLY' });
    for (const index of indexes) {
      expect(index.Projection.ProjectionType, index.IndexName).not.toBe('ALL');
      for (const attribute of PERSONAL_ATTRIBUTES)
        expect(index.Projection.NonKeyAttributes ?? [], index.IndexName).not.toContain(attribute);
    }
    const defined = (
      table.Properties.AttributeDefinitions as { AttributeName: string; AttributeType: string }[]
    )
      .filter((a) =>
        ['statusKey', 'eventsKind', 'eventsDueAt', 'purgeKind', 'purgeAt'].includes(a.AttributeName),
      )
      .map((a) => a.AttributeType);
    expect(defined).toEqual(['S', 'S', 'S', 'S', 'S']);
  });
});

describe('webhooks of config/clients.json', () => {
  it('the project declares a client with a webhook and one without (so both cases are checked here)', () => {
    expect(withWebhook.length).toBeGreaterThan(0);
    expect(withoutWebhook.length).toBeGreaterThan(0);
  });

  it("sends each webhook client's events, and only its own, to its API destination with the secret header", () => {
    for (const client of withWebhook) {
      const id = `${pascal(client.name)}Webhook`;
      // Act
      const connection = resources()[`${id}Connection`];
      const destination = resources()[`${id}Destination`];
      const rule = resources()[`${id}Rule`];
      // Assess
      expect(connection.Type).toBe('AWS::Events::Connection');
      expect(connection.Properties.AuthorizationType).toBe('API_KEY');
      expect(connection.Properties.AuthParameters).toEqual({
        ApiKeyAuthParameters: {
          ApiKeyName: WEBHOOK_SECRET_HEADER,
          ApiKeyValue: `{{resolve:secretsmanager:${client.webhook?.secretName}:SecretString}}`,
        },
      });
      expect(destination.Type).toBe('AWS::Events::ApiDestination');
      expect(destination.Properties).toMatchObject({
        ConnectionArn: getAtt(`${id}Connection`),
        HttpMethod: 'POST',
        InvocationEndpoint: client.webhook?.url,
        InvocationRateLimitPerSecond: client.webhook?.rateLimitPerSecond ?? 10,
      });
      expect(rule.Type).toBe('AWS::Events::Rule');
      expect(rule.Properties.EventBusName).toEqual({ Ref: 'EventBus' });
      expect(rule.Properties.EventPattern).toEqual({
        source: [EVENT_SOURCE],
        'detail-type': [RECORD_STATE_CHANGED],
        detail: { client: [client.name] },
      });
      expect(rule.Properties.Targets).toEqual([
        {
          Id: 'webhook',
          Arn: getAtt(`${id}Destination`),
          RoleArn: getAtt('WebhookInvokeRole'),
          RetryPolicy: { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 },
          DeadLetterConfig: { Arn: getAtt(`${id}DeadLetterQueue`) },
        },
      ]);
    }
  });

  it('keeps what EventBridge gave up on in an encrypted dead-letter queue for 14 days, writable by that rule only, with an alarm', () => {
    for (const client of withWebhook) {
      const id = `${pascal(client.name)}Webhook`;
      // Act
      const queue = resources()[`${id}DeadLetterQueue`];
      const policy = resources()[`${id}DeadLetterQueuePolicy`];
      const alarm = resources()[`${id}DeadLettersAlarm`];
      // Assess
      expect(queue.Properties).toEqual({
        QueueName: `dealer-gateway-ci-${client.name}-webhook-dlq`,
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 1209600,
      });
      expect(policy.Type).toBe('AWS::SQS::QueuePolicy');
      expect(policy.Properties.Queues).toEqual([{ Ref: `${id}DeadLetterQueue` }]);
      const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      expect(statements).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: 'sqs:SendMessage',
          Resource: getAtt(`${id}DeadLetterQueue`),
          Condition: { ArnEquals: { 'aws:SourceArn': getAtt(`${id}Rule`) } },
        }),
      ]);
      expect(alarm.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'NumberOfMessagesSent',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(`${id}DeadLetterQueue`, 'QueueName') }],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [{ Ref: 'AlarmTopic' }],
      });
    }
  });

  it('lets EventBridge invoke exactly the webhook destinations, nothing else', () => {
    // Act
    const role = resources().WebhookInvokeRole as Resource;
    const statements = statementsOf('WebhookInvokeRole');
    // Assess
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain(
      '"Service":"events.amazonaws.com"',
    );
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['events:InvokeApiDestination'],
        Resource: withWebhook.map((c) => getAtt(`${pascal(c.name)}WebhookDestination`)),
      },
    ]);
  });

  it('gives a client without a webhook no connection, destination, rule or queue', () => {
    for (const client of withoutWebhook) {
      const mine = Object.keys(resources()).filter((id) => id.startsWith(`${pascal(client.name)}Webhook`));
      expect(mine, client.name).toEqual([]);
    }
    for (const type of ['AWS::Events::Connection', 'AWS::Events::ApiDestination'])
      expect(ofType(type).length, type).toBe(withWebhook.length);
    // The reconciler's schedule is a rule too, on the default bus.
    const onBus = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.EventBusName);
    expect(onBus.length).toBe(withWebhook.length);
  });
});

describe("the functions' permissions for events", () => {
  const byFunction = () =>
    Object.fromEntries(
      ofType('AWS::Lambda::Function').map(([id, fn]) => [
        id.replace(/LambdaFunction$/, ''),
        (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
      ]),
    );
  const granting = (roleId: string, action: string) =>
    statementsOf(roleId).filter((s) => listOf(s.Action).includes(action));

  it('lets the workers, the reconciler and nothing else put events, on the stack bus only', () => {
    // Act
    const putters = Object.entries(byFunction())
      .filter(([, role]) => granting(role, 'events:PutEvents').length > 0)
      .map(([name]) => name)
      .sort();
    // Assess
    expect(putters).toEqual(['CrmDelivery', 'ErpDelivery', 'Reconciler']);
    for (const name of putters) {
      const [statement, ...more] = granting(byFunction()[name], 'events:PutEvents');
      expect(more, name).toEqual([]);
      expect(listOf(statement.Action), name).toEqual(['events:PutEvents']);
      expect(statement.Resource, name).toEqual([getAtt('EventBus')]);
    }
  });

  it('lets the reconciler query the events and purge indexes, each by name', () => {
    const queries = granting(byFunction().Reconciler, 'dynamodb:Query').flatMap((s) => listOf(s.Resource));
    const indexes = queries.map((r) => JSON.stringify(r).match(/index\/(\w+)/)?.[1]).sort();
    expect(indexes).toEqual(expect.arrayContaining(['events', 'purge']));
  });

  it('has no wildcard resource or action in any role (but the log streams of its own log group)', () => {
    for (const [roleId] of ofType('AWS::IAM::Role')) {
      for (const statement of statementsOf(roleId)) {
        const actions = listOf(statement.Action);
        for (const action of actions) expect(action.includes('*'), `${roleId} ${action}`).toBe(false);
        // A log group's streams have names Lambda chooses: `log-group:<name>:*` is the narrowest there is.
        if (actions.every((a) => a.startsWith('logs:'))) continue;
        for (const resource of listOf(statement.Resource as unknown))
          expect(JSON.stringify(resource), `${roleId} ${actions}`).not.toContain('*');
      }
    }
  });
});
