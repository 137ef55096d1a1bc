/**
 * Events and webhooks in the packaged CloudFormation template (`npm run package -- --stage ci`): the bus, the
 * table's `status`, `events` and `purge` indexes (keys, projections, no personal data), a rule per client of
 * config/clients.json with a webhook queueing its events for the dispatcher in its own message group, the queue's
 * policy and an alarm
 * per webhook client; nothing for a client without a webhook; the functions' permissions without wildcards.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import clients from '../../config/clients.json' with { type: 'json' };
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';

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

  it("queues each webhook client's events, and only theirs, for the dispatcher, in the client's own message group", () => {
    // Act
    const rules = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.EventBusName);
    // Assess: one rule per client, its target naming the client as group (SQS fair queues: the client is the tenant).
    expect(rules.map(([id]) => id)).toEqual(withWebhook.map((client) => `${pascal(client.name)}WebhookRule`));
    for (const client of withWebhook) {
      const rule = resources()[`${pascal(client.name)}WebhookRule`];
      expect(rule.Properties.EventBusName).toEqual({ Ref: 'EventBus' });
      expect(rule.Properties.EventPattern).toEqual({
        source: [EVENT_SOURCE],
        'detail-type': [RECORD_STATE_CHANGED],
        detail: { client: [client.name] },
      });
      expect(rule.Properties.Targets).toEqual([
        { Id: 'webhookQueue', Arn: getAtt('WebhookQueue'), SqsParameters: { MessageGroupId: client.name } },
      ]);
    }
    // A standard queue (fair by its groups), not FIFO: a FIFO group would hold a client's events behind a retry.
    expect(resources().WebhookQueue.Properties.FifoQueue).toBeUndefined();
  });

  it('lets those rules alone send to the webhook queue', () => {
    // Act
    const policy = resources().WebhookQueuePolicy;
    // Assess
    expect(policy.Properties.Queues).toEqual([{ Ref: 'WebhookQueue' }]);
    expect((policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: getAtt('WebhookQueue'),
        Condition: {
          ArnEquals: {
            'aws:SourceArn': withWebhook.map((client) => getAtt(`${pascal(client.name)}WebhookRule`)),
          },
        },
      }),
    ]);
  });

  it("raises an alarm per client whose webhook fails, on the dispatcher's metric with the client's name", () => {
    for (const client of withWebhook) {
      // Act
      const alarm = resources()[`${pascal(client.name)}WebhookAlarm`];
      // Assess
      expect(alarm.Properties).toMatchObject({
        Namespace: 'DealerGateway',
        MetricName: 'webhookFailed',
        Dimensions: [
          { Name: 'service', Value: 'dealer-gateway' },
          { Name: 'client', Value: client.name },
        ],
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [{ Ref: 'AlarmTopic' }],
      });
    }
  });

  it('gives a client without a webhook no alarm, and no rule any of its events', () => {
    const onBus = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.EventBusName);
    for (const client of withoutWebhook) {
      const mine = Object.keys(resources()).filter((id) => id.startsWith(`${pascal(client.name)}Webhook`));
      expect(mine, client.name).toEqual([]);
      for (const [id, rule] of onBus)
        expect(JSON.stringify(rule.Properties.EventPattern), id).not.toContain(`"${client.name}"`);
    }
    // The reconciler's schedule is a rule too, on the default bus.
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

  it("lets the workers, the reconciler, the console's redrive and nothing else put events, on the stack bus only", () => {
    // Act
    const putters = Object.entries(byFunction())
      .filter(([, role]) => granting(role, 'events:PutEvents').length > 0)
      .map(([name]) => name)
      .sort();
    // Assess
    // The console's redrive publishes its reopened records' `accepted` events, as npm run redrive does.
    expect(putters).toEqual(['ConsoleApi', 'CrmDelivery', 'ErpDelivery', 'Reconciler']);
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

  it('has no wildcard resource or action in any role (but the log streams of its own log group, and CloudWatch metric reads)', () => {
    for (const [roleId] of ofType('AWS::IAM::Role')) {
      for (const statement of statementsOf(roleId)) {
        const actions = listOf(statement.Action);
        for (const action of actions) expect(action.includes('*'), `${roleId} ${action}`).toBe(false);
        // A log group's streams have names Lambda chooses: `log-group:<name>:*` is the narrowest there is.
        if (actions.every((a) => a.startsWith('logs:'))) continue;
        // GetMetricData has no resource-level permissions: `*` is the only resource IAM accepts for it (the console's
        // Activity page; the namespace is the request's, lib/console/activity).
        if (actions.every((a) => a === 'cloudwatch:GetMetricData')) continue;
        for (const resource of listOf(statement.Resource as unknown))
          expect(JSON.stringify(resource), `${roleId} ${actions}`).not.toContain('*');
      }
    }
  });
});
