import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSOLE_CALLBACK_PATH,
  CONSOLE_ROLES,
  GROUPS_CLAIM,
  ID_TOKEN_SECONDS,
  MAX_SIGN_IN_AGE_SECONDS,
} from '../../lib/console/constants.ts';
import { DEFAULT_ERP_BATCH_SIZE } from '../../lib/downstream/erp/constants.ts';
import { MAX_VISIBILITY_SECONDS } from '../../lib/webhooks/dispatch.ts';
import { retryWindow, WEBHOOK_RETRY_SCHEDULE, webhookAttempts } from '../../lib/webhooks/retrySchedule.ts';
import { packagedTemplate, withPackageLock } from '../../testkit/packagedTemplate.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; Condition?: string };
let resources: Record<string, Resource>;
let outDir: string;

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const functions = () => ofType('AWS::Lambda::Function');
const workers = () => functions().filter(([id]) => /Delivery/.test(id));
const roleOf = (fn: Resource) => (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
type Statement = { Action: string[]; Resource: unknown[] };
/** A role's statements: its inline policies' and those of the AWS::IAM::Policy resources attached to it. */
const statementsOf = (roleId: string): Statement[] => [
  ...(resources[roleId].Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  ),
  ...ofType('AWS::IAM::Policy')
    .filter(([, policy]) => ref(policy.Properties.Roles).includes(ref({ Ref: roleId })))
    .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .map((statement) => ({ ...statement, Resource: [statement.Resource].flat() })),
];
const ref = (value: unknown) => JSON.stringify(value);
/** The event source mappings of the delivery workers (not the webhook dispatcher's). */
const deliveryMappings = () =>
  ofType('AWS::Lambda::EventSourceMapping').filter(
    ([, mapping]) => !ref(mapping.Properties.EventSourceArn).includes('WebhookQueue'),
  );

beforeAll(async () => {
  // Prepare: `npm run package` as a user runs it, without AWS credentials (once for all deploy tests).
  const packaged = await packagedTemplate();
  outDir = packaged.dir;
  resources = packaged.template.Resources as Record<string, Resource>;
}, 120_000);

afterAll(() => rm(outDir, { recursive: true, force: true }));

/** Actions IAM authorises on no resource (`Resource: '*'` is their only form). */
const RESOURCELESS_ACTIONS = ['cloudwatch:GetMetricData', 'xray:PutSpans', 'xray:PutSpansForIndexing'];
describe('packaged CloudFormation template', () => {
  it('runs every function on nodejs24.x, arm64, behind a REST API', () => {
    expect(functions().length).toBeGreaterThanOrEqual(6);
    for (const [, fn] of functions()) {
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
    }
    expect(ofType('AWS::ApiGateway::RestApi')).toHaveLength(1);
  });

  it('encrypts the queues; visibility is at least six worker timeouts; dead letters kept 14 days, by receive count only far past the attempts', () => {
    const queues = ofType('AWS::SQS::Queue');
    const maxWorkerTimeout = Math.max(...workers().map(([, fn]) => fn.Properties.Timeout as number));
    const attempts = new Set(
      workers().map(
        ([, fn]) =>
          (fn.Properties.Environment as { Variables: Record<string, string> }).Variables
            .DELIVERY_MAX_ATTEMPTS,
      ),
    );
    expect(attempts.size).toBe(1);
    // The delivery queues (the webhook queue has its own rules, below).
    const sources = queues.filter(([id, q]) => q.Properties.RedrivePolicy && id !== 'WebhookQueue');
    expect(sources).toHaveLength(2);
    for (const [, queue] of queues) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    for (const [, queue] of sources) {
      expect(queue.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * maxWorkerTimeout);
      const redrive = queue.Properties.RedrivePolicy as {
        deadLetterTargetArn: { 'Fn::GetAtt': [string, string] };
        maxReceiveCount: number;
      };
      // The worker fails a record after DELIVERY_MAX_ATTEMPTS tries counted on the record and dead-letters its
      // message itself. A message is also received when a copy meets another worker's lease (each such wait is
      // one try of another copy, at most the attempts) or the worker errs, so SQS's own redrive must sit far
      // beyond: at least four receives per attempt, and within SQS's limit of 1000.
      const maxReceiveCount = Number(redrive.maxReceiveCount);
      expect(maxReceiveCount).toBeGreaterThanOrEqual(4 * Number([...attempts][0]));
      expect(maxReceiveCount).toBeLessThanOrEqual(1000);
      const dlq = resources[redrive.deadLetterTargetArn['Fn::GetAtt'][0]];
      expect(dlq.Properties.MessageRetentionPeriod).toBe(1209600);
    }
  });

  it('keeps the delivery queues standard queues, which serve clients fairly by message group (SQS fair queues)', () => {
    // A FIFO queue would take the group id too, but deliver each client's records one at a time, in order.
    // The webhook queue is fed by the bus, without group ids: only the delivery queues carry the client.
    const sources = ofType('AWS::SQS::Queue').filter(
      ([id, q]) => q.Properties.RedrivePolicy && id !== 'WebhookQueue',
    );
    expect(sources.map(([id]) => id).sort()).toEqual(['CaseQueue', 'SalesRegistrationQueue']);
    for (const [, queue] of sources) {
      expect(queue.Properties.FifoQueue).toBeUndefined();
      expect(queue.Properties.ContentBasedDeduplication).toBeUndefined();
      expect(String(queue.Properties.QueueName)).not.toMatch(/\.fifo$/);
    }
  });

  it('feeds each worker from its queue with batch item failures, a batching window and a concurrency cap', () => {
    const mappings = deliveryMappings();
    expect(mappings).toHaveLength(2);
    for (const [, mapping] of mappings) {
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      expect(mapping.Properties.MaximumBatchingWindowInSeconds as number).toBeGreaterThan(0);
      expect(
        (mapping.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency,
      ).toBeGreaterThanOrEqual(2);
    }
  });

  it("sizes each worker's batches by AWS's rules for standard queues, and its time and lease by the batch's worst case", () => {
    // Prepare
    const mappings = deliveryMappings();
    const functionOf = (mapping: Resource) =>
      resources[(mapping.Properties.FunctionName as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]];
    const queueOf = (mapping: Resource) =>
      resources[(mapping.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]];
    expect(mappings).toHaveLength(2);
    for (const [, mapping] of mappings) {
      const batchSize = mapping.Properties.BatchSize as number;
      const window = mapping.Properties.MaximumBatchingWindowInSeconds as number;
      const fn = functionOf(mapping);
      const timeout = fn.Properties.Timeout as number;
      const env = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
      // Assess: a standard queue takes up to 10,000 a batch; above 10 only with a window of 1 to 300 s. Batches
      // large enough for the downstreams' batched calls (Salesforce: 200 a call), and a lone record's wait short.
      expect(batchSize).toBeGreaterThanOrEqual(200);
      expect(batchSize).toBeLessThanOrEqual(10_000);
      expect(window).toBeGreaterThanOrEqual(batchSize > 10 ? 1 : 0);
      expect(window).toBeLessThanOrEqual(2);
      // A whole batch in time: its calls (SAP: ERP_BATCH_SIZE a `$batch`; Salesforce: 200 a Collections call), each
      // at worst a token or CSRF fetch and the call, twice (a refresh repeats it once), 10 s each.
      const perCall =
        env.ERP_BASE_URL !== undefined ? Number(env.ERP_BATCH_SIZE ?? DEFAULT_ERP_BATCH_SIZE) : 200;
      const calls = Math.ceil(batchSize / perCall);
      expect(timeout).toBeGreaterThanOrEqual(calls * 4 * 10);
      expect(timeout).toBeLessThanOrEqual(900);
      // A message comes back only after its invocation can have ended (AWS advises six times the timeout), and a
      // record's lease outlasts the invocation that claimed it.
      expect(queueOf(mapping).Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * timeout);
      expect(Number(env.DELIVERY_LEASE_SECONDS)).toBeGreaterThan(timeout);
    }
  });

  it('keeps status records on demand, with TTL for duplicate-detection entries and point-in-time recovery', () => {
    const [[, table]] = ofType('AWS::DynamoDB::Table');
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('serves GET /events with an API key from the eventFeed function, which may only Query the feed index', () => {
    // Prepare
    const [[feedId, feedFunction]] = functions().filter(([id]) => id === 'EventFeedLambdaFunction');
    const [[, table]] = ofType('AWS::DynamoDB::Table');
    const methods = ofType('AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod === 'GET' && ref(m.Properties.Integration).includes(`"${feedId}"`),
    );
    const indexes = table.Properties.GlobalSecondaryIndexes as { IndexName: string }[];
    // Assess: the route, behind a key.
    expect(methods).toHaveLength(1);
    const [[, method]] = methods;
    expect(method.Properties.ApiKeyRequired).toBe(true);
    const [, resource] = Object.entries(resources).find(
      ([id]) => id === (method.Properties.ResourceId as { Ref: string }).Ref,
    ) as [string, Resource];
    expect(resource.Properties.PathPart).toBe('events');
    // The sparse index: the owning client, then publishing time and id; only the entry's event projected.
    expect(indexes.find((index) => index.IndexName === 'feed')).toEqual({
      IndexName: 'feed',
      KeySchema: [
        { AttributeName: 'feedClient', KeyType: 'HASH' },
        { AttributeName: 'feedKey', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['feedEvent'] },
    });
    // Its role: logs, the API keys' secret, and Query on the feed index, nothing of the table itself.
    const dynamo = statementsOf(roleOf(feedFunction)).filter((st) =>
      st.Action.some((a) => a.startsWith('dynamodb:')),
    );
    const feedIndex = ['${RecordsTable', 'Arn}/index/feed'].join('.');
    expect(dynamo.map((st) => [st.Action, ref(st.Resource)])).toEqual([
      [['dynamodb:Query'], ref([{ 'Fn::Sub': feedIndex }])],
    ]);
  });

  it('gives every function its own role, with no wildcard action, nor a wildcard resource but for an action that takes none', () => {
    const roles = functions().map(([, fn]) => roleOf(fn));
    expect(new Set(roles).size).toBe(roles.length);
    // Every role Lambda may assume belongs to one function (EventBridge's role for the webhooks: events.test.ts).
    const lambdaRoles = ofType('AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'),
    );
    expect(lambdaRoles.map(([id]) => id).sort()).toEqual([...roles].sort());
    for (const role of roles) {
      for (const statement of statementsOf(role)) {
        for (const action of statement.Action) expect(action === '*' || action.endsWith(':*')).toBe(false);
        // CloudWatch's GetMetricData (the console's "Activity" page) and X-Ray's span uploads take no resource: `*` only.
        const resourceless = statement.Action.every((action) => RESOURCELESS_ACTIONS.includes(action));
        for (const resource of statement.Resource) if (!resourceless) expect(resource).not.toBe('*');
      }
    }
  });

  it('lets intake only send to its own queue and the worker only consume its own queue', () => {
    const actionsOn = (role: string, prefix: string) =>
      statementsOf(role).filter((s) => s.Action.some((a) => a.startsWith(prefix)));
    const byFunction = Object.fromEntries(functions().map(([id, fn]) => [id, roleOf(fn)]));
    const [intakeSqs] = actionsOn(byFunction.SalesRegistrationLambdaFunction, 'sqs:');
    expect(intakeSqs.Action).toEqual(['sqs:SendMessage']);
    expect(ref(intakeSqs.Resource)).toBe(ref([{ 'Fn::GetAtt': ['SalesRegistrationQueue', 'Arn'] }]));
    const [workerSqs] = actionsOn(byFunction.CrmDeliveryLambdaFunction, 'sqs:');
    expect(workerSqs.Action.sort()).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
    ]);
    expect(ref(workerSqs.Resource)).toBe(ref([{ 'Fn::GetAtt': ['CaseQueue', 'Arn'] }]));
    // Status look-ups: a record by id and the holds (two statements, each limited to its keys: tests/deploy/roles),
    // and the caller's records by frame number through the `frame` index only.
    const statusDynamo = actionsOn(byFunction.RecordStatusLambdaFunction, 'dynamodb:');
    const frameIndex = ['${RecordsTable', 'Arn}/index/frame'].join('.');
    expect(statusDynamo.map((s) => [s.Action, ref(s.Resource)])).toEqual([
      [['dynamodb:GetItem'], ref([{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }])],
      [['dynamodb:GetItem'], ref([{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }])],
      [['dynamodb:Query'], ref([{ 'Fn::Sub': frameIndex }])],
    ]);
    expect(actionsOn(byFunction.OpenApiLambdaFunction, 'dynamodb:')).toEqual([]);
  });

  it('holds no secret: workers get parameter names and may read only those parameters', () => {
    for (const [id, fn] of workers()) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables).filter((k) => /PASSWORD$|SECRET$/.test(k))).toEqual([]);
      const parameterName = Object.entries(variables).find(([k]) => k.endsWith('_PARAMETER'))?.[1] as string;
      expect(parameterName).toMatch(/^\/dealer-gateway\/ci\//);
      const ssm = statementsOf(roleOf(fn)).filter((s) => s.Action.includes('ssm:GetParameter'));
      expect(ref(ssm), id).toContain(`parameter${parameterName}`);
    }
  });

  it('alarms on new dead letters, worker errors, the oldest message, stuck records and held downstreams, to an SNS topic', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const on = (metric: string) => alarms.filter((a) => a.MetricName === metric);
    // Every minute with a new dead letter fires (not the queue's depth, which stays in ALARM while old ones wait).
    expect(
      on('failed')
        .map((a) => ref(a.Dimensions))
        .sort(),
    ).toEqual(
      ['crm', 'erp'].map((d) =>
        ref([
          { Name: 'service', Value: 'dealer-gateway' },
          { Name: 'downstream', Value: d },
        ]),
      ),
    );
    for (const a of on('failed'))
      expect([a.Statistic, a.Period, a.Threshold, a.ComparisonOperator, a.TreatMissingData]).toEqual([
        'Sum',
        60,
        0,
        'GreaterThanThreshold',
        'notBreaching',
      ]);
    expect(on('ApproximateNumberOfMessagesVisible')).toEqual([]);
    expect(on('oldestRequeuedWait').map((a) => [a.Threshold, a.ComparisonOperator])).toEqual([
      [1800, 'GreaterThanThreshold'],
    ]);
    expect(
      on('Errors')
        .map((a) => ref(a.Dimensions))
        .sort(),
    ).toEqual(
      workers()
        .map(([id]) => ref([{ Name: 'FunctionName', Value: { Ref: id } }]))
        .sort(),
    );
    expect(on('ApproximateAgeOfOldestMessage')).toHaveLength(2);
    // A held downstream (lib/outage): raised when the hold opens, cleared when it closes; no data keeps the state.
    expect(
      on('downstreamHeld').map((a) => [
        ref(a.Dimensions),
        a.Statistic,
        a.Period,
        a.Threshold,
        a.ComparisonOperator,
        a.TreatMissingData,
        a.OKActions,
      ]),
    ).toEqual(
      ['erp', 'crm'].map((d) => [
        ref([
          { Name: 'service', Value: 'dealer-gateway' },
          { Name: 'downstream', Value: d },
        ]),
        'Maximum',
        60,
        0,
        'GreaterThanThreshold',
        'ignore',
        [{ Ref: 'AlarmTopic' }],
      ]),
    );
    for (const a of alarms) expect(a.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
    expect(ofType('AWS::SNS::Subscription').map(([, s]) => s.Condition)).toEqual(['HasAlarmEmail']);
  });

  it('has a dashboard of accepted, delivered, rejected, failed and held per downstream', () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = (dashboard.Properties.DashboardBody as { 'Fn::Sub': string })['Fn::Sub'];
    for (const metric of ['accepted', 'delivered', 'rejected', 'failed', 'downstreamHeld']) {
      for (const downstream of ['erp', 'crm'])
        expect(body).toContain(`"${metric}","service","dealer-gateway","downstream","${downstream}"`);
    }
  });

  it('deploys each function as its bundle only: minified ESM (entry and lazy chunks) with source maps, no node_modules', async () => {
    // The zips are rewritten by any test file that packages (tests run two at a time): read them under its lock.
    const zips = await withPackageLock(() =>
      Promise.all(
        functions().map(async ([id]) => {
          const name = id.replace(/LambdaFunction$/, '');
          return readFile(join(process.cwd(), '.esbuild', `${name[0].toLowerCase()}${name.slice(1)}.zip`));
        }),
      ),
    );
    for (const [index, [, fn]] of functions().entries()) {
      const zip = unzipSync(zips[index]);
      const files = Object.keys(zip).sort();
      const handlerFile = String(fn.Properties.Handler).replace(/\.handler$/, '');
      expect(files).toContain(`${handlerFile}.mjs`);
      // Only the entry, esbuild's chunks and their source maps: nothing else, no node_modules.
      for (const file of files) expect(file).toMatch(/^functions\/(chunks\/[\w-]+|\w+)\.mjs(\.map)?$/);
      for (const file of files.filter((f) => f.endsWith('.mjs'))) {
        expect(files).toContain(`${file}.map`);
        // Minified: long lines (unminified code averages well under 60 characters a line).
        const code = new TextDecoder().decode(zip[file]);
        if (code.length > 2000) expect(code.length / code.split('\n').length, file).toBeGreaterThan(200);
      }
    }
  });
});

describe('the webhook dispatcher, its queue and dead-letter queue', () => {
  const dispatcher = () => resources.WebhookDispatcherLambdaFunction;
  const mapping = () =>
    ofType('AWS::Lambda::EventSourceMapping').find(([, m]) =>
      ref(m.Properties.EventSourceArn).includes('WebhookQueue'),
    )?.[1] as Resource;

  it('keeps a failing event for every try of the 3-day schedule, then moves it to the dead-letter queue', () => {
    // Prepare
    const queue = resources.WebhookQueue.Properties;
    const redrive = queue.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    const lastTryAt = retryWindow(webhookAttempts() - 1, WEBHOOK_RETRY_SCHEDULE);
    // Assess: one receive per try (the dispatcher's try number is the receive count), none cut short.
    expect(Number(redrive.maxReceiveCount)).toBe(webhookAttempts(WEBHOOK_RETRY_SCHEDULE));
    expect(ref(redrive.deadLetterTargetArn)).toBe(ref({ 'Fn::GetAtt': ['WebhookDeadLetterQueue', 'Arn'] }));
    // Retention: the last try's window ends before SQS would drop the message, with a day to spare.
    expect(Number(queue.MessageRetentionPeriod) * 1000).toBeGreaterThanOrEqual(
      lastTryAt.startMs + lastTryAt.lengthMs + 86_400_000,
    );
    expect(resources.WebhookDeadLetterQueue.Properties.MessageRetentionPeriod).toBe(1209600);
    expect(queue.SqsManagedSseEnabled).toBe(true);
    // A wait between two tries (at most two windows) fits one ChangeMessageVisibility.
    expect((2 * WEBHOOK_RETRY_SCHEDULE.capMs) / 1000).toBeLessThanOrEqual(MAX_VISIBILITY_SECONDS);
    expect(WEBHOOK_RETRY_SCHEDULE.spanMs).toBeGreaterThanOrEqual(3 * 86_400_000);
  });

  it('runs the dispatcher from that queue with batch item failures, a concurrency cap and its stage’s secrets', () => {
    // Prepare
    const fn = dispatcher();
    const env = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
    const source = mapping();
    // Assess
    expect(source.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(source.Properties.BatchSize as number).toBeLessThanOrEqual(10);
    expect((source.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency).toBe(2);
    expect(resources.WebhookQueue.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(
      6 * (fn.Properties.Timeout as number),
    );
    expect(env.WEBHOOK_SECRETS_PREFIX).toBe('dealer-gateway/ci/webhooks/');
    expect(roleOf(fn)).toBe('WebhookDispatcherRole');
  });

  it("limits the dispatcher's role to its queue, the records table and its clients' secrets of the stage", () => {
    // Act
    const statements = statementsOf('WebhookDispatcherRole');
    // Assess
    expect(statements.map((s) => [...s.Action].sort())).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'],
      ['dynamodb:GetItem', 'dynamodb:PutItem'],
      // Each try noted in its client's webhook summary (the console's "Webhooks" page).
      ['dynamodb:UpdateItem'],
      // Each attempt noted in its record's story (the console's timeline).
      ['dynamodb:UpdateItem'],
      ['secretsmanager:GetSecretValue'],
      // Its spans, to X-Ray's OTLP endpoint (TracesExportPolicy).
      ['xray:PutSpans', 'xray:PutSpansForIndexing'],
    ]);
    expect(ref(statements[1].Resource)).toBe(ref([{ 'Fn::GetAtt': ['WebhookQueue', 'Arn'] }]));
    expect(ref(statements[2].Resource)).toBe(ref([{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }]));
    expect(ref(statements[3].Resource)).toBe(ref([{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }]));
    expect(ref((statements[3] as { Condition?: unknown }).Condition)).toContain(
      'webhookSummary#example-dealer',
    );
    expect(ref(statements[4].Resource)).toBe(ref([{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }]));
    expect(ref((statements[4] as { Condition?: unknown }).Condition)).toContain('webhookStory');
    expect(ref(statements[5].Resource)).toContain('secret:dealer-gateway/ci/webhooks/example-dealer-??????');
  });

  it('no longer sends a secret in a header: no API destination, no connection, no secret header', () => {
    expect(ofType('AWS::Events::ApiDestination')).toEqual([]);
    expect(ofType('AWS::Events::Connection')).toEqual([]);
    expect(ref(resources).toLowerCase()).not.toContain('x-dealer-gateway-secret');
  });
});

describe("the console's sign-in (contract §7): a Cognito user pool", () => {
  const only = (type: string) => {
    const found = ofType(type);
    expect(found, type).toHaveLength(1);
    return found[0];
  };

  it('takes people added by operators only, signing in by email', () => {
    // Act
    const [, userPool] = only('AWS::Cognito::UserPool');
    // Assess
    expect(userPool.Properties).toMatchObject({
      UsernameAttributes: ['email'],
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
    });
  });

  it('has the groups support and operators, the console roles that reach the ID token as cognito:groups', () => {
    // Act
    const groups = ofType('AWS::Cognito::UserPoolGroup').map(([, group]) => group.Properties);
    // Assess
    expect(groups.map((group) => group.GroupName).sort()).toEqual([...CONSOLE_ROLES].sort());
    for (const group of groups) expect(group.UserPoolId).toEqual({ Ref: 'ConsoleUserPool' });
    expect(GROUPS_CLAIM).toBe('cognito:groups');
  });

  it("has an app client for the console: code flow, no secret, back to the stage's /console/callback, tokens as lib/console expects", () => {
    // Act
    const [clientId, client] = only('AWS::Cognito::UserPoolClient');
    const props = client.Properties;
    const hours = (validity: unknown, unit: unknown) =>
      unit === 'hours' ? Number(validity) * 3600 : Number.NaN;
    const units = props.TokenValidityUnits as Record<string, string>;
    // Assess
    expect(props).toMatchObject({
      UserPoolId: { Ref: 'ConsoleUserPool' },
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthFlows: ['code'],
      SupportedIdentityProviders: ['COGNITO'],
    });
    expect(props.AllowedOAuthScopes).toEqual(expect.arrayContaining(['openid', 'email']));
    expect(props.CallbackURLs).toEqual([
      {
        'Fn::Sub': `https://\${ApiGatewayRestApi}.execute-api.\${AWS::Region}.\${AWS::URLSuffix}/ci${CONSOLE_CALLBACK_PATH}`,
      },
    ]);
    expect(hours(props.IdTokenValidity, units.IdToken)).toBe(ID_TOKEN_SECONDS);
    expect(hours(props.RefreshTokenValidity, units.RefreshToken)).toBe(MAX_SIGN_IN_AGE_SECONDS);
    expect(clientId).toBe('ConsoleUserPoolClient');
  });

  it('has a hosted sign-in domain of the pool', () => {
    // Act
    const [, domain] = only('AWS::Cognito::UserPoolDomain');
    // Assess
    expect(domain.Properties.UserPoolId).toEqual({ Ref: 'ConsoleUserPool' });
    expect(ref(domain.Properties.Domain)).toContain('dealer-gateway-ci');
  });

  it("gives the console API the pool's issuer and the app client's id, and its own role", () => {
    // Prepare
    const [, fn] = functions().find(([id]) => id === 'ConsoleApiLambdaFunction') as [string, Resource];
    // Act
    const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    // Assess
    expect(env.CONSOLE_ISSUER_URL).toEqual({
      'Fn::Sub': `https://cognito-idp.\${AWS::Region}.\${AWS::URLSuffix}/\${ConsoleUserPool}`,
    });
    expect(env.CONSOLE_CLIENT_ID).toEqual({ Ref: 'ConsoleUserPoolClient' });
    expect(roleOf(fn)).toBe('ConsoleApiRole');
  });

  it("serves the console's pages without a key from consoleAssets, whose role may only write its logs", () => {
    // Prepare
    const [[assetsId, fn]] = functions().filter(([id]) => id === 'ConsoleAssetsLambdaFunction');
    const methods = ofType('AWS::ApiGateway::Method').filter(([, m]) =>
      ref(m.Properties.Integration).includes(`"${assetsId}"`),
    );
    const pathOf = (method: Resource): string => {
      const parts: string[] = [];
      let id = (method.Properties.ResourceId as { Ref?: string }).Ref;
      while (id && resources[id]) {
        parts.unshift(String(resources[id].Properties.PathPart));
        id = (resources[id].Properties.ParentId as { Ref?: string }).Ref;
      }
      return `/${parts.join('/')}`;
    };
    // Act
    const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    // Assess: three GET routes, public (the page holds no data; the API it calls wants a token).
    expect(
      methods
        .map(([, m]) => [m.Properties.HttpMethod, pathOf(m), m.Properties.ApiKeyRequired ?? false])
        .sort(),
    ).toEqual([
      ['GET', '/console', false],
      ['GET', '/console/assets/{file}', false],
      ['GET', '/console/callback', false],
    ]);
    expect(env.CONSOLE_SIGN_IN_ORIGIN).toEqual({
      'Fn::Sub': `https://\${ConsoleUserPoolDomain}.auth.\${AWS::Region}.amazoncognito.com`,
    });
    expect(env.CONSOLE_CLIENT_ID).toEqual({ Ref: 'ConsoleUserPoolClient' });
    expect(statementsOf(roleOf(fn)).flatMap((st) => st.Action)).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
  });

  it('serves /console and /console/ alike: one `console` resource (a REST API routes both to it) that may invoke the function on any path', () => {
    // Prepare: API Gateway (REST) has no resource for a trailing slash (a path part may not be empty); it routes
    // `/console/` to the `console` resource and hands the handler the path as asked, which serves the page for both
    // (tests/console/consoleAssets.test.ts). What must hold here: no second resource that would shadow it, and an
    // invoke permission not narrowed to the path without its slash.
    const [[assetsId]] = functions().filter(([id]) => id === 'ConsoleAssetsLambdaFunction');
    const consoleResources = ofType('AWS::ApiGateway::Resource').filter(([, r]) =>
      /^console\/?$/.test(String(r.Properties.PathPart)),
    );
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) =>
      ref(p.Properties.FunctionName).includes(`"${assetsId}"`),
    );
    // Act
    const sourceArns = permissions.map(([, p]) => ref(p.Properties.SourceArn));
    // Assess
    expect(consoleResources.map(([, r]) => r.Properties.PathPart)).toEqual(['console']);
    expect(sourceArns).toHaveLength(1);
    expect(sourceArns[0]).toMatch(/\/\*\/\*"\]\]\}$/);
  });
});
