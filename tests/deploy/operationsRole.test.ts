import { randomBytes } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { queueArnByName } from '../../lib/redrive/queueArn.ts';
import { redriveOnAws } from '../../lib/redrive/redrive.ts';
import { OPERATOR_ATTRIBUTES } from '../../lib/store/operatorAttributes.ts';
import { readStatusRecord } from '../../lib/store/statusIndex.ts';
import type { RecordKind } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { localStage } from '../../local/project.ts';
import { createLocalResources, type LocalResources } from '../../local/resources.ts';
import type { ResolvedServerlessConfig } from '../../local/serverlessConfig.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { type RecordedRequest, recordedRequests } from '../../testkit/calledArns.ts';
import {
  type IamRequest,
  isAllowed,
  type PolicyStatement,
  roleStatements,
  unusedGrants,
} from '../../testkit/iamPolicy.ts';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';
import { PSEUDO_PARAMETERS, type TemplateRefs, templateRefs } from '../../testkit/templateRefs.ts';
import { runRecords } from '../../tools/records/run.ts';
import { acceptRecord, attempt } from '../records/seed.ts';

/*
 * Least privilege for the operators' tools on AWS: `npm run records --stage` and `npm run redrive --stage` run with
 * the stack's OperationsRole. Checked as the functions' roles are (roles.test.ts): the code's real calls, signed as
 * `operator` through the recorder (testkit/awsCallRecorder.ts) in front of dynalite and fauxqs, must all be
 * allowed by the role's statements in the packaged template, and the role must grant nothing those calls do not
 * use. SQS's message move task cannot run on fauxqs: the recorder takes StartMessageMoveTask and checks what the
 * SQS documentation says it needs (on the dead-letter queue and the destination queue) in its place.
 */

const ROLE = 'OperationsRole';
/** What signs the operators' calls (the recorder attributes calls by access key id). */
const OPERATOR = 'operator';
/** The queue and dead-letter queue of `npm run redrive -- erp|crm`, by kind (as in scripts/redrive.ts). */
const REDRIVEN: Record<RecordKind, { queue: string; deadLetterQueue: string }> = {
  salesRegistration: { queue: 'SalesRegistrationQueue', deadLetterQueue: 'SalesRegistrationDeadLetterQueue' },
  caseRecord: { queue: 'CaseQueue', deadLetterQueue: 'CaseDeadLetterQueue' },
};

let template: Template;
let refs: TemplateRefs;
let statements: PolicyStatement[];
let recorder: AwsCallRecorder;
let stage: string;
let local: LocalResources;
const savedEnv = { ...process.env };
/** Every record this file seeded as `failed`: redrive reopens them all. */
const failedIds: string[] = [];

/** serverless.yml's queues and table, named as `--stage <stage>` deploys them: `dealer-gateway-<stage>-…`. */
const stageResources = (name: string): ResolvedServerlessConfig => {
  const config = structuredClone(inject('serverlessConfig'));
  const prefix = `dealer-gateway-${localStage}-`;
  const resources = Object.fromEntries(
    Object.entries(config.resources?.Resources ?? {}).filter(([, r]) =>
      ['AWS::SQS::Queue', 'AWS::DynamoDB::Table'].includes(r.Type),
    ),
  );
  for (const resource of Object.values(resources)) {
    const properties = resource.Properties ?? {};
    for (const key of ['QueueName', 'TableName']) {
      const value = properties[key];
      if (typeof value === 'string' && value.startsWith(prefix))
        properties[key] = `dealer-gateway-${name}-${value.slice(prefix.length)}`;
    }
  }
  return {
    ...config,
    provider: { ...config.provider, environment: {} },
    resources: { Resources: resources },
  };
};

/** Signs what follows as the operator. */
const asOperator = () => {
  process.env.AWS_ACCESS_KEY_ID = OPERATOR;
};

/** Signs what follows as the seeding (intake's and the worker's writes), which the role has no part in. */
const asSeeding = () => {
  process.env.AWS_ACCESS_KEY_ID = 'seed';
};

beforeAll(async () => {
  // Packaged first: packaging must not see this file's local settings.
  ({ template } = await packagedTemplate());
  refs = templateRefs(template);
  statements = roleStatements(template, ROLE, refs);
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
  });
  stage = `op${randomBytes(4).toString('hex')}`;
  local = await createLocalResources(stageResources(stage), {
    sqs: inject('sqsEndpoint'),
    dynamodb: inject('dynamoEndpoint'),
  });
  const sdk = new DynamoDBClient(localClientConfig(inject('dynamoEndpoint')));
  const TableName = local.tables.RecordsTable.name;
  while ((await sdk.send(new DescribeTableCommand({ TableName }))).Table?.TableStatus !== 'ACTIVE')
    await new Promise((resolve) => setTimeout(resolve, 10));
  sdk.destroy();
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'seed',
    AWS_SECRET_ACCESS_KEY: 'recorded-not-checked',
    AWS_ENDPOINT_URL_DYNAMODB: recorder.endpoint,
    AWS_ENDPOINT_URL_SQS: recorder.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: recorder.endpoint,
    RECORDS_TABLE: TableName,
    // The packaged (ci) stage's bus: the recorder takes PutEvents for any bus, and its ARN is the template's.
    EVENT_BUS_NAME: refs.attribute('EventBus', 'Name'),
  });
}, 180_000);

afterAll(async () => {
  await recorder?.stop();
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

/** Every `action on resource` the role's Allow statements grant. */
const grants = (list: PolicyStatement[]) =>
  list
    .filter((s) => s.effect === 'Allow')
    .flatMap((s) => s.actions.flatMap((action) => s.resources.map((resource) => `${action} on ${resource}`)));

const operatorRequests = (): RecordedRequest[] => recordedRequests(recorder.calls, OPERATOR, local, refs);

const denied = (requests: (IamRequest & { call?: string })[]) => [
  ...new Set(
    requests
      .filter((r) => !isAllowed(statements, r))
      .map((r) => `${r.action} on ${r.resource}${r.call ? ` (${r.call})` : ''}`),
  ),
];

describe('OperationsRole in the packaged template', () => {
  it('grants exactly what the operators’ tools call, on the stack’s resources by name', () => {
    // Prepare
    const arn = (id: string) => refs.attribute(id, 'Arn');
    const table = arn('RecordsTable');
    const queues = ['SalesRegistrationQueue', 'CaseQueue'].map(arn);
    const deadLetterQueues = ['SalesRegistrationDeadLetterQueue', 'CaseDeadLetterQueue'].map(arn);
    const on = (actions: string[], resources: string[]) =>
      actions.flatMap((action) => resources.map((resource) => `${action} on ${resource}`));
    const expected = [
      ...on(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], [table]),
      ...on(['dynamodb:Query'], [`${table}/index/status`, `${table}/index/frame`]),
      ...on(['sqs:GetQueueUrl', 'sqs:GetQueueAttributes'], [...queues, ...deadLetterQueues]),
      ...on(['sqs:StartMessageMoveTask', 'sqs:ReceiveMessage', 'sqs:DeleteMessage'], deadLetterQueues),
      ...on(['sqs:SendMessage'], queues),
      ...on(['events:PutEvents'], [arn('EventBus')]),
    ];
    // Act
    const granted = grants(statements);
    // Assess
    expect(granted.sort()).toEqual(expected.sort());
    expect(statements.every((s) => s.effect === 'Allow')).toBe(true);
    for (const statement of statements) {
      for (const value of [...statement.actions, ...statement.resources])
        expect(/[*?]/.test(value), `${statement.source}: ${value}`).toBe(false);
    }
  });

  it('can be assumed by the named operators, or else by the account’s principals with MFA only; its ARN is an output', () => {
    // Prepare: the trust policy is one statement chosen by the HasOperatorPrincipals condition.
    interface TrustStatement {
      Effect: string;
      Principal: Record<string, unknown>;
      Action: unknown;
      Condition?: unknown;
    }
    const trust = template.Resources[ROLE].Properties.AssumeRolePolicyDocument as {
      Statement: { 'Fn::If': [string, TrustStatement, TrustStatement] }[];
    };
    const conditions = template.Conditions as Record<string, unknown>;
    const outputs = template.Outputs as Record<string, { Value: unknown }>;
    // Act
    expect(trust.Statement).toHaveLength(1);
    const [conditionName, named, anyWithMfa] = trust.Statement[0]['Fn::If'];
    // Assess: packaged without operatorPrincipals, the condition is false (the MFA branch applies).
    expect(conditionName).toBe('HasOperatorPrincipals');
    expect(conditions.HasOperatorPrincipals).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
    for (const statement of [named, anyWithMfa]) {
      expect(statement.Effect).toBe('Allow');
      expect([statement.Action].flat()).toEqual(['sts:AssumeRole']);
      expect(Object.keys(statement.Principal)).toEqual(['AWS']);
    }
    expect(named.Principal.AWS).toEqual({ 'Fn::Split': [',', ''] });
    expect(named).not.toHaveProperty('Condition');
    expect([anyWithMfa.Principal.AWS].flat().map((p) => refs.resolve(p))).toEqual([
      `arn:aws:iam::${PSEUDO_PARAMETERS['AWS::AccountId']}:root`,
    ]);
    expect(anyWithMfa.Condition).toEqual({ Bool: { 'aws:MultiFactorAuthPresent': 'true' } });
    expect(outputs.OperationsRoleArn.Value).toEqual({ 'Fn::GetAtt': [ROLE, 'Arn'] });
  });

  it('allows SQS’s message move task what the SQS documentation requires, for both queues', () => {
    // Prepare: the task runs with its caller's permissions, on the dead-letter queue (source) and the queue.
    const requirements = Object.values(REDRIVEN).flatMap(({ queue: queueId }) => {
      const { deadLetterTargetArn } = template.Resources[queueId].Properties.RedrivePolicy as {
        deadLetterTargetArn: unknown;
      };
      const source = refs.resolve(deadLetterTargetArn);
      return [
        ...['StartMessageMoveTask', 'ReceiveMessage', 'DeleteMessage', 'GetQueueAttributes'].map(
          (action) => ({
            action: `sqs:${action}`,
            resource: source,
          }),
        ),
        { action: 'sqs:SendMessage', resource: refs.attribute(queueId, 'Arn') },
      ];
    });
    // Act / Assess
    expect(denied(requirements)).toEqual([]);
  });
});

/** Runs `npm run records -- --stage <stage> <argv>` in this process, signed as the operator. */
const records = async (argv: string[]) => {
  asOperator();
  let stdout = '';
  let stderr = '';
  const code = await runRecords(
    ['--stage', stage, ...argv],
    {},
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
      errIsTerminal: false,
    },
  );
  return { code, stdout, stderr };
};

const idsOf = (ndjson: string) =>
  ndjson
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);

describe('the operators’ tools, run against the stage’s resources through the recorder', () => {
  it('npm run records --stage: every call it makes is allowed', async () => {
    // Prepare: a failed sale with a frame number, an accepted case an hour old.
    asSeeding();
    const frame = `OPS${randomBytes(6).toString('hex').toUpperCase()}`;
    const failed = await attempt(await acceptRecord('salesRegistration', { frame }), {
      status: 'failed',
      error: 'SAP answered 500',
      at: new Date().toISOString(),
    });
    failedIds.push(failed.id);
    const stuck = await acceptRecord('caseRecord', { at: new Date(Date.now() - 3_600_000).toISOString() });
    // SAP held, as the workers hold it (the hold module's own API): --counts reads both hold items.
    const heldSince = new Date();
    const holds = createDownstreamHolds({
      afterFailures: 2,
      probeSeconds: 30,
      failureRate: 0.5,
      rateWindow: 20,
      apiUsageShare: 0.8,
      cacheSeconds: 0,
    });
    await holds.noteOutcomes(
      'erp',
      ['a', 'b'].map((recordId) => ({ recordId, kind: 'transient' as const })),
      heldSince,
    );
    const from = recorder.calls.length;
    // Act
    const byStatus = await records(['--status', 'failed', '--json']);
    const byAge = await records(['--status', 'accepted', '--older-than', '30m', '--json']);
    const byFrame = await records(['--frame', frame, '--json']);
    const counts = await records(['--counts', '--json']);
    const one = await records([failed.id, '--json']);
    // Assess
    for (const run of [byStatus, byAge, byFrame, counts, one]) expect(run.stderr).toBe('');
    expect(idsOf(byStatus.stdout)).toEqual([failed.id]);
    expect(idsOf(byAge.stdout)).toEqual([stuck.id]);
    expect(idsOf(byFrame.stdout)).toEqual([failed.id]);
    expect(JSON.parse(counts.stdout).salesRegistration.failed).toBe(1);
    expect(JSON.parse(counts.stdout).holds).toMatchObject({
      erp: { held: true, reason: 'outage', heldSince: heldSince.toISOString() },
      crm: { held: false },
    });
    expect(JSON.parse(one.stdout).id).toBe(failed.id);
    const calls = recorder.calls.slice(from);
    expect(calls.every((c) => c.caller === OPERATOR && !c.problem)).toBe(true);
    expect(
      new Set(
        calls.map((c) => `${c.operation}${(c.authorised[0]?.resource as { index?: string })?.index ?? ''}`),
      ),
    ).toEqual(new Set(['Querystatus', 'Queryframe', 'GetItem']));
    expect(denied(operatorRequests())).toEqual([]);
  });

  it('npm run redrive --stage (lib/redrive redriveOnAws, the queues found by name): every call it makes is allowed', async () => {
    // Prepare: a failed record of each kind.
    asSeeding();
    const failed = await Promise.all(
      (Object.keys(REDRIVEN) as RecordKind[]).map(async (kind) =>
        attempt(await acceptRecord(kind), { status: 'failed', error: 'down', at: new Date().toISOString() }),
      ),
    );
    failedIds.push(...failed.map((record) => record.id));
    const from = recorder.calls.length;
    const published = recorder.putEvents.length;
    asOperator();
    // The SDK's client, as scripts/redrive.ts builds it; here it keeps to AWS_ENDPOINT_URL_SQS (the recorder) also
    // for the queue URLs fauxqs answers, which name fauxqs itself (on AWS they name SQS's own endpoint).
    const sqs = new SQSClient({ region: 'eu-west-1', useQueueUrlAsEndpoint: false });
    // Act
    const results = [];
    for (const [kind, { queue, deadLetterQueue }] of Object.entries(REDRIVEN) as [
      RecordKind,
      (typeof REDRIVEN)[RecordKind],
    ][]) {
      results.push(
        await redriveOnAws(sqs, kind, {
          queueArn: await queueArnByName(sqs, local.queues[queue].name),
          deadLetterQueueArn: await queueArnByName(sqs, local.queues[deadLetterQueue].name),
        }),
      );
    }
    sqs.destroy();
    // Assess
    expect(results.reduce((sum, r) => sum + r.reopened, 0)).toBe(failedIds.length);
    expect(recorder.moveTasks.slice(-2)).toEqual([
      {
        SourceArn: local.queues.SalesRegistrationDeadLetterQueue.arn,
        DestinationArn: local.queues.SalesRegistrationQueue.arn,
      },
      { SourceArn: local.queues.CaseDeadLetterQueue.arn, DestinationArn: local.queues.CaseQueue.arn },
    ]);
    // Each outbox also held the `failed` event nobody published in the seeding: published with it now.
    const accepted = recorder.putEvents
      .slice(published)
      .map((entry) => JSON.parse(String(entry.Detail)) as { recordId: string; state: string })
      .filter((event) => event.state === 'accepted');
    expect(accepted.map((e) => e.recordId).sort()).toEqual([...failedIds].sort());
    const calls = recorder.calls.slice(from);
    expect(
      calls
        .filter((c) => c.problem || c.status !== 200)
        .map((c) => `${c.operation}: ${c.problem ?? c.status}`),
    ).toEqual([]);
    expect(new Set(calls.map((c) => c.operation))).toEqual(
      new Set([
        'GetQueueUrl',
        'GetQueueAttributes',
        'Query',
        'BatchGetItem',
        'UpdateItem',
        'PutEvents',
        'StartMessageMoveTask',
      ]),
    );
    expect(denied(operatorRequests())).toEqual([]);
  });

  it('reads no personal field: a whole record, `record`, or a whole item returned by a write are refused', async () => {
    // Prepare: a record of the stage; the role's attribute list.
    asSeeding();
    const sale = await acceptRecord('salesRegistration');
    const table = refs.attribute('RecordsTable', 'Arn');
    const listed = statements.flatMap((s) =>
      Object.values(s.conditions ?? {}).flatMap((keys) => keys['dynamodb:Attributes'] ?? []),
    );
    const from = recorder.calls.length;
    // Act: the operator reads the record as the service does (no projection), and as the tools do on AWS.
    asOperator();
    const whole = await readStatusRecord(sale.id);
    const named = await readStatusRecord(sale.id, { attributes: OPERATOR_ATTRIBUTES });
    const [wholeRead, namedRead] = recordedRequests(recorder.calls.slice(from), OPERATOR, local, refs);
    const refusedByHand = await records([sale.id, '--show-personal']);
    // Assess
    expect(whole?.record).toBeDefined();
    expect(named).not.toHaveProperty('record');
    expect(isAllowed(statements, wholeRead)).toBe(false);
    expect(isAllowed(statements, namedRead)).toBe(true);
    expect(new Set(listed)).toEqual(new Set(OPERATOR_ATTRIBUTES));
    expect(listed).not.toContain('record');
    const request = (action: string, context: Record<string, string[]>) => ({
      action,
      resource: table,
      context,
    });
    expect(
      isAllowed(
        statements,
        request('dynamodb:GetItem', {
          'dynamodb:Attributes': ['pk', 'record'],
          'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'],
        }),
      ),
    ).toBe(false);
    expect(
      isAllowed(
        statements,
        request('dynamodb:UpdateItem', {
          'dynamodb:Attributes': ['pk', 'status'],
          'dynamodb:ReturnValues': ['ALL_NEW'],
        }),
      ),
    ).toBe(false);
    expect(
      isAllowed(
        statements,
        request('dynamodb:UpdateItem', {
          'dynamodb:Attributes': ['pk', 'record'],
          'dynamodb:ReturnValues': ['NONE'],
        }),
      ),
    ).toBe(false);
    expect(refusedByHand.stderr).toContain('--show-personal reads the local service only');
  });

  it('OperationsRole grants nothing that the runs above did not use', () => {
    expect(unusedGrants(statements, operatorRequests())).toEqual([]);
  });
});
