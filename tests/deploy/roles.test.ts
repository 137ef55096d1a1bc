import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { newWebhookSecret } from '../../lib/webhooks/secrets.ts';
import { localClientConfig } from '../../local/aws.ts';
import { type LocalOidcProvider, startLocalOidcProvider } from '../../local/oidcProvider.ts';
import { pollOnce } from '../../local/queuePoller.ts';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { type AwsCallRecorder, startAwsCallRecorder } from '../../testkit/awsCallRecorder.ts';
import { recordedRequests as recordedRequestsOf } from '../../testkit/calledArns.ts';
import { consoleApiEvent, devUserToken } from '../../testkit/consoleSignIn.ts';
import { apiEvent, formPost, frameGet, jsonPost, statusGet } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { type IamRequest, isAllowed, roleStatements, unusedGrants } from '../../testkit/iamPolicy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { keyShapeOf } from '../../testkit/keyShapes.ts';
import {
  type DeployedFunction,
  deployedFunctions,
  type LambdaProcess,
  lambdaEnvironment,
  type ServerlessFunction,
  startLambdaProcess,
  unpackArtifacts,
} from '../../testkit/lambdaProcesses.ts';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';
import {
  keyShapeProbes,
  PERSONAL_ATTRIBUTE,
  personalFieldReads,
  readsPersonalFields,
} from '../../testkit/tableProbes.ts';
import { type TemplateRefs, templateRefs } from '../../testkit/templateRefs.ts';

/*
 * Least privilege, checked against what the code does rather than what someone wrote down. Every function of
 * serverless.yml runs its deployed artifact (the zip `npm run package` writes) in a Node process of its own,
 * with the environment the packaged template gives it, against fauxqs, dynalite, the SAP and Salesforce
 * sandboxes and a recording endpoint (testkit/awsCallRecorder.ts) that every AWS call of that process
 * passes: each process signs with its own access key id, the function's name, so each call is attributed to
 * its function. The scenarios below drive the functions' real paths; then each function's role in the
 * packaged template must allow every call recorded for it, and grant nothing that no recorded call (or AWS on
 * the function's behalf, listed below) uses.
 *
 * A new AWS call in the code fails here until its role allows it; a grant the code stopped using fails here
 * until it is removed. A function or path without a scenario shows as a function never invoked or as grants
 * never used: add the scenario here (see the sections below), never an expected list of calls.
 */

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';
const FUNCTION_NAMES = Object.keys(
  (inject('serverlessConfig') as unknown as { functions: Record<string, ServerlessFunction> }).functions,
);

let template: Template;
let refs: TemplateRefs;
let functions: DeployedFunction[];
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let recorder: AwsCallRecorder;
let sap: SapSandbox;
let salesforce: SalesforceSandbox;
let codeDir: string;
let dynamo: DynamoDBClient;
/** The console's sign-in provider: the local one stands for the stage's Cognito user pool. */
let oidc: LocalOidcProvider;
const CONSOLE_URL = 'http://localhost:39003';
const processes: Record<string, LambdaProcess> = {};
const invoked = new Set<string>();

/** Secret values the recorder serves, by the variable whose `<NAME>_PARAMETER` names the SSM parameter. */
const parameterValues = (): Record<string, string> => ({
  ERP_PASSWORD: sap.password,
  CRM_CLIENT_SECRET: salesforce.clientSecret,
  CONTENT_ID_KEY: 'roles-test-content-id-key',
});

/** Settings the template leaves empty (deploy-time environment): the sandboxes' here. */
const deploySettings = (): Record<string, string> => ({
  ERP_BASE_URL: sap.url,
  ERP_USERNAME: sap.username,
  CRM_BASE_URL: salesforce.url,
  CRM_CLIENT_ID: salesforce.clientId,
});

/** A template environment value, for the local resources: queue URLs through the recorder, table names. */
const localValue = (value: unknown): string => {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  const id = (value as { Ref?: string }).Ref;
  if (id && aws.resources.queues[id])
    return `${recorder.endpoint}/000000000000/${aws.resources.queues[id].name}`;
  if (id && aws.resources.tables[id]) return aws.resources.tables[id].name;
  // The bus keeps its name: the recorder answers PutEvents itself, for any bus.
  if (id && template.Resources[id]?.Type === 'AWS::Events::EventBus') return refs.resolve(value);
  // The console's Cognito user pool and app client: the local OpenID Connect provider and its client.
  if (id && template.Resources[id]?.Type === 'AWS::Cognito::UserPoolClient') return oidc.clientId;
  const sub = (value as { 'Fn::Sub'?: unknown })['Fn::Sub'];
  if (
    typeof sub === 'string' &&
    sub.startsWith('https://cognito-idp.') &&
    sub.includes(`\${ConsoleUserPool}`)
  )
    return oidc.issuer;
  // The pool's hosted domain, where the console's page exchanges its code: the local provider serves that too.
  if (typeof sub === 'string' && sub.includes(`\${ConsoleUserPoolDomain}`)) return oidc.issuer;
  throw new Error(
    `environment value ${JSON.stringify(value)}: not resolved for local running (roles.test.ts)`,
  );
};

/** The environment of one function's process: the template's variables, its own key id, the recorder. */
const environmentOf = (
  fn: DeployedFunction,
  secrets: Record<string, string>,
  parameters: Record<string, string>,
) => {
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    variables[name] = localValue(value);
    if (variables[name] === '' && name in deploySettings()) variables[name] = deploySettings()[name];
    if (name.endsWith('_PARAMETER')) {
      const secret = parameterValues()[name.slice(0, -'_PARAMETER'.length)];
      if (secret === undefined) throw new Error(`${fn.name}: no test value for the parameter of ${name}`);
      parameters[variables[name]] = secret;
    }
    if (name === 'WEBHOOK_SECRETS_PREFIX') {
      for (const client of clientsConfig.clients.filter((c) => c.webhook))
        secrets[`${variables[name]}${client.name}`] = newWebhookSecret();
    }
    if (name === 'API_KEYS_SECRET') {
      secrets[variables[name]] = JSON.stringify({
        'example-dealer': testKeys.dealer,
        'example-web-forms': testKeys.webForms,
        'example-dealer-test': testKeys.testDealer,
      });
    }
  }
  return lambdaEnvironment(fn, join(codeDir, fn.name), {
    ...variables,
    AWS_ACCESS_KEY_ID: fn.name,
    AWS_SECRET_ACCESS_KEY: 'recorded-not-checked',
    AWS_ENDPOINT_URL: recorder.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: recorder.endpoint,
    AWS_ENDPOINT_URL_SQS: recorder.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: recorder.endpoint,
    AWS_ENDPOINT_URL_SSM: recorder.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: recorder.endpoint,
    AWS_ENDPOINT_URL_CLOUDWATCH: recorder.endpoint,
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
  });
};

beforeAll(async () => {
  // Packaged before isolatedAws() points this process's settings (RECORDS_TABLE, EVENT_BUS_NAME, ...) at local
  // resources: packaging reads the environment (`${env:...}`), and the template must hold the stack's references.
  ({ template } = await packagedTemplate());
  aws = await isolatedAws();
  dynamo = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
  [sap, salesforce, oidc] = await Promise.all([
    startSapSandbox(),
    startSalesforceSandbox(),
    startLocalOidcProvider({ apiUrl: CONSOLE_URL }),
  ]);
  refs = templateRefs(template);
  functions = deployedFunctions(
    (inject('serverlessConfig') as unknown as { functions: Record<string, ServerlessFunction> }).functions,
    template,
  );
  codeDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-roles-'));
  await unpackArtifacts(functions, codeDir);
  const secrets: Record<string, string> = {};
  const parameters: Record<string, string> = {};
  recorder = await startAwsCallRecorder({
    forward: { dynamodb: aws.dynamoEndpoint, sqs: aws.sqsEndpoint },
    secrets,
    parameters,
  });
  // The functions' output goes where the run scans every test's output for personal data.
  const logDir = inject('logCaptureDir') || codeDir;
  await Promise.all(
    functions.map(async (fn) => {
      processes[fn.name] = await startLambdaProcess(
        fn,
        join(codeDir, fn.name),
        environmentOf(fn, secrets, parameters),
        join(logDir, `function-${fn.name}-${process.pid}.log`),
      );
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(processes).map((p) => p.stop()));
  await Promise.all([recorder?.stop(), sap?.stop(), salesforce?.stop(), oidc?.stop()]);
  dynamo?.destroy();
  if (codeDir) await rm(codeDir, { recursive: true, force: true });
});

const invoke = <T>(name: string, event: unknown): Promise<T> => {
  invoked.add(name);
  return processes[name].invoke<T>(event);
};

/** An API Gateway invocation; the answer's body parsed when it is JSON. */
const api = async (name: string, event: APIGatewayProxyEvent) => {
  const answer = await invoke<{ statusCode: number; body: string }>(name, event);
  try {
    return { status: answer.statusCode, body: JSON.parse(answer.body) };
  } catch {
    return { status: answer.statusCode, body: answer.body };
  }
};

const salesIds = (answer: { body: { registrations: { id: string }[] } }) =>
  answer.body.registrations.map((r) => r.id);

/** Makes a record look accepted more than a day ago (the duplicate window). */
const backdate = async (id: string) => {
  const old = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString();
  await dynamo.send(
    new UpdateItemCommand({
      TableName: aws.resources.tables.RecordsTable.name,
      Key: { pk: { S: id } },
      UpdateExpression: 'SET acceptedAt = :old, updatedAt = :old',
      ExpressionAttributeValues: { ':old': { S: old } },
    }),
  );
};

describe('intake: salesRegistration and crmCase', () => {
  it('accept a record, recognise its duplicate and refuse an unknown key', async () => {
    const sale = salesRegistrationInput({ FrameNum: uniqueFrame() });
    const first = await api('salesRegistration', jsonPost(SALES, [sale]));
    const again = await api('salesRegistration', jsonPost(SALES, [sale]));
    const refused = await api('salesRegistration', jsonPost(SALES, [sale], { 'x-api-key': 'not-a-key' }));
    const crmCase = caseInput({ frameNo: uniqueFrame() });
    const caseFirst = await api('crmCase', jsonPost(CASE, crmCase));
    const caseAgain = await api('crmCase', jsonPost(CASE, crmCase));
    const form = await api(
      'crmCase',
      formPost(CASE, {
        firstName: 'Bernadette',
        surname: 'Caseperson',
        email: 'bernadette.caseperson@example.com',
        privacyConsent: 'on',
        frameNo: uniqueFrame(),
      }),
    );
    expect([first.status, again.status, refused.status]).toEqual([200, 200, 403]);
    expect(salesIds(again)).toEqual(salesIds(first));
    expect([caseFirst.status, caseAgain.status, form.status]).toEqual([200, 200, 200]);
    expect(caseAgain.body.CrmId).toBe(caseFirst.body.CrmId);
  });

  it('accept several records at once, and answer a repeated Idempotency-Key as before (422 for another body)', async () => {
    const sales = [1, 2].map(() => salesRegistrationInput({ FrameNum: uniqueFrame() }));
    const key = { 'Idempotency-Key': `roles-${uniqueFrame()}` };
    const first = await api('salesRegistration', jsonPost(SALES, sales, key));
    const repeated = await api('salesRegistration', jsonPost(SALES, sales, key));
    const other = await api('salesRegistration', jsonPost(SALES, [sales[0]], key));
    const crmCase = caseInput({ frameNo: uniqueFrame() });
    const caseKey = { 'Idempotency-Key': `roles-${uniqueFrame()}` };
    const caseFirst = await api('crmCase', jsonPost(CASE, crmCase, caseKey));
    const caseRepeated = await api('crmCase', jsonPost(CASE, crmCase, caseKey));
    expect([first.status, repeated.status, other.status]).toEqual([200, 200, 422]);
    expect(salesIds(repeated)).toEqual(salesIds(first));
    expect([caseFirst.status, caseRepeated.status]).toEqual([200, 200]);
    expect(caseRepeated.body.CrmId).toBe(caseFirst.body.CrmId);
  });

  it('accept the same content after the duplicate window as a new record', async () => {
    const sale = salesRegistrationInput({ FrameNum: uniqueFrame() });
    const [firstId] = salesIds(await api('salesRegistration', jsonPost(SALES, [sale])));
    await backdate(firstId);
    const later = await api('salesRegistration', jsonPost(SALES, [sale]));
    const crmCase = caseInput({ frameNo: uniqueFrame() });
    const { CrmId } = (await api('crmCase', jsonPost(CASE, crmCase))).body;
    await backdate(CrmId);
    const caseLater = await api('crmCase', jsonPost(CASE, crmCase));
    expect(later.status).toBe(200);
    expect(salesIds(later)[0]).not.toBe(firstId);
    expect(caseLater.status).toBe(200);
    expect(caseLater.body.CrmId).not.toBe(CrmId);
  });

  it('answer 503 when SQS fails, and accept the records on the retry', async () => {
    const sales = [1, 2].map(() => salesRegistrationInput({ FrameNum: uniqueFrame() }));
    const crmCase = caseInput({ frameNo: uniqueFrame() });
    recorder.fail('salesRegistration', 'SendMessageBatch');
    const unavailable = await api('salesRegistration', jsonPost(SALES, sales)).finally(recorder.heal);
    recorder.fail('crmCase', 'SendMessageBatch');
    const caseUnavailable = await api('crmCase', jsonPost(CASE, crmCase)).finally(recorder.heal);
    const retried = await api('salesRegistration', jsonPost(SALES, sales));
    const caseRetried = await api('crmCase', jsonPost(CASE, crmCase));
    expect([unavailable.status, caseUnavailable.status]).toEqual([503, 503]);
    expect([retried.status, caseRetried.status]).toEqual([200, 200]);
  });
});

describe('status look-ups, the event feed and the API description: recordStatus, eventFeed and openApi', () => {
  it('show a record to its owner only, and answer 404 for unknown and malformed ids', async () => {
    const [id] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })])),
    );
    const { CrmId } = (await api('crmCase', jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })))).body;
    const sale = await api('recordStatus', statusGet(`${SALES}/${id}`, { id }));
    const found = await api('recordStatus', statusGet(`${CASE}/${CrmId}`, { CrmId }));
    const foreign = await api('recordStatus', statusGet(`${CASE}/${id}`, { CrmId: id }));
    const unknown = 'f'.repeat(32);
    const missing = await api('recordStatus', statusGet(`${SALES}/${unknown}`, { id: unknown }));
    const malformed = await api('recordStatus', statusGet(`${SALES}/x`, { id: 'x' }));
    expect(sale).toMatchObject({ status: 200, body: { id, status: 'accepted' } });
    expect(found).toMatchObject({ status: 200, body: { id: CrmId } });
    expect([foreign.status, missing.status, malformed.status]).toEqual([404, 404, 404]);
  });

  it("list the caller's sales records by frame number, and refuse a blank FrameNum without a read", async () => {
    const frame = uniqueFrame();
    const [id] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: frame })])),
    );
    const found = await api('recordStatus', frameGet(` ${frame} `));
    const blank = await api('recordStatus', frameGet(' '));
    expect(found).toMatchObject({
      status: 200,
      body: { FrameNum: frame, records: [{ id, status: 'accepted' }] },
    });
    expect(blank).toMatchObject({ status: 400, body: { success: false } });
  });

  it("page through the caller's event feed, and refuse a limit out of range without a read", async () => {
    const feed = (query: Record<string, string>) =>
      apiEvent({
        path: '/events',
        httpMethod: 'GET',
        headers: { 'x-api-key': testKeys.dealer },
        queryStringParameters: query,
        multiValueQueryStringParameters: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
      });
    const page = await api('eventFeed', feed({ limit: '10' }));
    const refused = await api('eventFeed', feed({ limit: '0' }));
    expect(page).toMatchObject({ status: 200, body: { events: expect.any(Array) } });
    expect(refused).toMatchObject({ status: 400, body: { message: expect.stringContaining('limit') } });
  });

  it('serve the OpenAPI document', async () => {
    const answer = await api('openApi', apiEvent({ path: '/openapi.json', httpMethod: 'GET' }));
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toMatch(/^3\./);
  });
});

/** How each worker's records come in and how its downstream is made to fail. */
const pipelines = () =>
  [
    {
      worker: 'erpDelivery',
      statusPath: SALES,
      accept: async () =>
        salesIds(
          await api(
            'salesRegistration',
            jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })]),
          ),
        )[0],
      failNext: (status: number, times: number) =>
        sap.inject(...Array.from({ length: times }, () => ({ status }))),
    },
    {
      worker: 'crmDelivery',
      statusPath: CASE,
      accept: async () =>
        (await api('crmCase', jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })))).body.CrmId as string,
      failNext: (status: number, times: number) =>
        salesforce.inject(...Array.from({ length: times }, () => ({ status }))),
    },
  ].map((p) => {
    const fn = functions.find((f) => f.name === p.worker) as DeployedFunction;
    const [queueId] = fn.sqsSources;
    const redrive = template.Resources[queueId].Properties.RedrivePolicy as {
      deadLetterTargetArn: { 'Fn::GetAtt': [string, string] };
    };
    const mapping = Object.values(template.Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' &&
        JSON.stringify(r.Properties.FunctionName).includes(`"${fn.logicalId}"`),
    );
    const bodies: string[] = [];
    const queueUrl = aws.resources.queues[queueId].url;
    /** One receive of the event source: the worker invoked with the batch as Lambda does. */
    const poll = () =>
      pollOnce({
        sqs: aws.sqs,
        queueUrl,
        batchSize: Number(mapping?.Properties.BatchSize ?? 10),
        handler: (event: SQSEvent) => {
          bodies.push(...event.Records.map((r) => r.body));
          return invoke<SQSBatchResponse>(p.worker, event);
        },
      });
    const status = async (id: string) =>
      (
        await api(
          'recordStatus',
          statusGet(`${p.statusPath}/${id}`, p.statusPath === CASE ? { CrmId: id } : { id }),
        )
      ).body as { status: string; attempts: number };
    /** Polls until the record is settled (backoff makes failed messages come back later). */
    const settle = async (id: string, deadlineMs = 20_000) => {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        await poll();
        const now = await status(id);
        if (now.status !== 'accepted') return now;
        if (Date.now() > deadline) throw new Error(`${p.worker}: ${id} still accepted`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const drain = async () => {
      while ((await poll()).received > 0);
    };
    return {
      ...p,
      fn,
      poll,
      status,
      settle,
      drain,
      bodies,
      queueUrl,
      deadLetterUrl: aws.resources.queues[redrive.deadLetterTargetArn['Fn::GetAtt'][0]].url,
    };
  });

describe('delivery: erpDelivery and crmDelivery on real SQS events', () => {
  it('deliver what intake queued, and drop a second copy of a delivered record', async () => {
    await Promise.all(
      pipelines().map(async (p) => {
        await p.drain();
        const id = await p.accept();
        const delivered = await p.settle(id);
        const copy = p.bodies.find((body) => body.includes(id)) as string;
        await aws.sqs.send(new SendMessageCommand({ QueueUrl: p.queueUrl, MessageBody: copy }));
        const second = await p.poll();
        expect(delivered, p.worker).toMatchObject({ status: 'delivered', attempts: 1 });
        expect(second, p.worker).toEqual({ received: 1, deleted: 1, failed: 0 });
        expect(await p.status(id), p.worker).toMatchObject({ status: 'delivered', attempts: 1 });
      }),
    );
  }, 40_000);

  it('retry a transient downstream failure after a backoff (visibility), then deliver', async () => {
    await Promise.all(
      pipelines().map(async (p) => {
        await p.drain();
        p.failNext(503, 1);
        const id = await p.accept();
        const first = await p.poll();
        const settled = await p.settle(id);
        expect(first, p.worker).toEqual({ received: 1, deleted: 0, failed: 1 });
        expect(settled, p.worker).toMatchObject({ status: 'delivered', attempts: 2 });
      }),
    );
  }, 40_000);

  it('record a downstream refusal as rejected', async () => {
    await Promise.all(
      pipelines().map(async (p) => {
        await p.drain();
        p.failNext(400, 1);
        const id = await p.accept();
        expect(await p.settle(id), p.worker).toMatchObject({ status: 'rejected', attempts: 1 });
      }),
    );
  }, 40_000);

  it('mark a record failed after the last attempt; its message goes to the dead-letter queue', async () => {
    await Promise.all(
      pipelines().map(async (p) => {
        const attempts = Number(p.fn.environment.DELIVERY_MAX_ATTEMPTS);
        await p.drain();
        p.failNext(503, attempts);
        const id = await p.accept();
        const failed = await p.settle(id, 30_000);
        await p.poll();
        const dead = await aws.drain(p.deadLetterUrl);
        expect(failed, p.worker).toMatchObject({ status: 'failed', attempts });
        expect(
          dead.map((m) => m.id),
          p.worker,
        ).toEqual([id]);
      }),
    );
  }, 60_000);
});

/** An EventBridge scheduled event for a function, as a `schedule` event of serverless.yml invokes it. */
const scheduledEvent = (fn: DeployedFunction) => ({
  version: '0',
  id: crypto.randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date().toISOString(),
  region: 'eu-west-1',
  resources: [`arn:aws:events:eu-west-1:123456789012:rule/${fn.functionName}`],
  detail: {},
});

/** Makes an accepted record due for the reconciler (as if its message had been lost a while ago). */
const makeDue = async (id: string) => {
  await dynamo.send(
    new UpdateItemCommand({
      TableName: aws.resources.tables.RecordsTable.name,
      Key: { pk: { S: id } },
      UpdateExpression: 'SET dueAt = :past',
      ConditionExpression: 'attribute_exists(dueAt)',
      ExpressionAttributeValues: { ':past': { S: new Date(Date.now() - 60_000).toISOString() } },
    }),
  );
};

describe('the operations console: consoleApi', () => {
  /** An ID token of a development user, by the provider's code flow with PKCE. */
  const tokenOf = (email: string) => devUserToken(oidc, CONSOLE_URL, email);
  const consoleCall = (method: 'GET' | 'POST', path: string, token?: string, body?: unknown) =>
    api('consoleApi', consoleApiEvent(method, path, token ? `Bearer ${token}` : undefined, body));

  /** Leaves a record as a worker leaves it after its last try: failed. */
  const fail = (id: string, kind: string) =>
    dynamo.send(
      new UpdateItemCommand({
        TableName: aws.resources.tables.RecordsTable.name,
        Key: { pk: { S: id } },
        UpdateExpression: 'SET #status = :failed, statusKey = :key REMOVE openKind, dueAt',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':failed': { S: 'failed' }, ':key': { S: `${kind}#failed` } },
      }),
    );

  it("verify a person's ID token, show a record, refuse support an action, and redrive an operator's chosen failed records", async () => {
    // Prepare: a case and a sale accepted through intake, then failed.
    const { CrmId } = (await api('crmCase', jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })))).body;
    const [saleId] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })])),
    );
    await aws.drain(aws.resources.queues.CaseQueue.url);
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    await Promise.all([fail(CrmId, 'caseRecord'), fail(saleId, 'salesRegistration')]);
    const [support, operator] = await Promise.all([
      tokenOf('support@example.com'),
      tokenOf('operator@example.com'),
    ]);
    // Act
    const unsigned = await consoleCall('GET', 'me');
    const me = await consoleCall('GET', 'me', support);
    const record = await consoleCall('GET', `records/${CrmId}`, support);
    const refused = await consoleCall('POST', 'records/redrive', support, { ids: [CrmId] });
    const redriven = await consoleCall('POST', 'records/redrive', operator, { ids: [CrmId, saleId] });
    // Assess
    expect(unsigned.status).toBe(401);
    expect(me).toMatchObject({ status: 200, body: { email: 'support@example.com', roles: ['support'] } });
    expect(record).toMatchObject({ status: 200, body: { id: CrmId, status: 'failed' } });
    expect(refused.status).toBe(403);
    expect(redriven).toMatchObject({ status: 200, body: { redriven: [CrmId, saleId] } });
    expect((await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id)).toEqual([CrmId]);
    expect((await aws.drain(aws.resources.queues.SalesRegistrationQueue.url)).map((m) => m.id)).toEqual([
      saleId,
    ]);
  }, 60_000);

  it('read every list a support user reads: records searched and filtered, failed, downstreams, webhooks, activity from CloudWatch', async () => {
    // Prepare: a sale, a case, a failed case.
    const frame = uniqueFrame();
    const [saleId] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: frame })])),
    );
    const { CrmId } = (await api('crmCase', jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })))).body;
    await aws.drain(aws.resources.queues.CaseQueue.url);
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    await fail(CrmId, 'caseRecord');
    const support = await tokenOf('support@example.com');
    // Act
    const answers = await Promise.all(
      [
        'records',
        `records?q=${frame}`,
        `records?q=${saleId}`,
        'records?q=49000001',
        'records?kind=crmCase&state=failed&mode=live&from=2026-01-01',
        'failed',
        'downstreams',
        'webhooks',
        'activity',
      ].map((path) => {
        return api('consoleApi', consoleApiEvent('GET', path, `Bearer ${support}`));
      }),
    );
    // Assess: each answered (the role's check is the suite's, over every call recorded)
    expect(answers.map((answer) => answer.status)).toEqual(Array(9).fill(200));
    expect(answers[1].body.records.map((row: { id: string }) => row.id)).toEqual([saleId]);
    expect(answers[5].body.records.map((row: { id: string }) => row.id)).toContain(CrmId);
  }, 60_000);

  it("show a record's customer, resend its last event, enable a webhook and list the audit", async () => {
    // Prepare: a sale accepted, failed and redriven (its `accepted` event published: a feed entry), and its
    // client's webhook disabled.
    const [saleId] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })])),
    );
    // And a test client's (its own webhook secret: the role reads each client's, as the dispatcher's does).
    const [testSaleId] = salesIds(
      await api(
        'salesRegistration',
        jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
          'x-api-key': testKeys.testDealer,
        }),
      ),
    );
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    await Promise.all([fail(saleId, 'salesRegistration'), fail(testSaleId, 'salesRegistration')]);
    const [support, operator] = await Promise.all([
      tokenOf('support@example.com'),
      tokenOf('operator@example.com'),
    ]);
    await consoleCall('POST', 'records/redrive', operator, { ids: [saleId, testSaleId] });
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    await dynamo.send(
      new PutItemCommand({
        TableName: aws.resources.tables.RecordsTable.name,
        Item: { pk: { S: 'webhook#example-dealer' }, webhookDisabledAt: { S: new Date().toISOString() } },
      }),
    );
    // Act
    const customer = await consoleCall('GET', `records/${saleId}/customer`, support);
    // Its webhook is a public https URL this machine cannot reach: the post fails, its attempt is noted all the same.
    const resent = await consoleCall('POST', `records/${saleId}/webhook/resend`, operator);
    const testResent = await consoleCall('POST', `records/${testSaleId}/webhook/resend`, operator);
    const enabled = await consoleCall('POST', 'webhooks/example-dealer/enable', operator);
    const audit = await consoleCall('GET', 'audit', operator);
    // Assess
    expect(customer.status).toBe(200);
    expect(resent).toMatchObject({ status: 200, body: { webhookId: expect.stringMatching(`^${saleId}:`) } });
    expect(testResent).toMatchObject({
      status: 200,
      body: { webhookId: expect.stringMatching(`^${testSaleId}:`) },
    });
    expect(enabled).toMatchObject({ status: 200, body: { client: 'example-dealer', enabled: true } });
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((entry: { action: string }) => entry.action).slice(0, 3)).toEqual([
      'enable-webhook',
      'resend-webhook',
      'resend-webhook',
    ]);
  }, 60_000);
});

describe('the operations console: consoleAssets', () => {
  it('serve the page and its script from the bundle, with no AWS call', async () => {
    // Act
    const page = await invoke<{ statusCode: number; headers: Record<string, string>; body: string }>(
      'consoleAssets',
      apiEvent({ httpMethod: 'GET', path: '/console/', resource: '/console' }),
    );
    const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec(page.body)?.[1] ?? 'missing';
    const asset = await invoke<{ statusCode: number; headers: Record<string, string> }>(
      'consoleAssets',
      apiEvent({
        httpMethod: 'GET',
        path: `/console/${script}`,
        resource: '/console/assets/{file}',
        pathParameters: { file: script.slice('assets/'.length) },
      }),
    );
    // Assess
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain(`connect-src 'self' ${oidc.issuer}`);
    expect(asset).toMatchObject({
      statusCode: 200,
      headers: { 'content-type': 'text/javascript; charset=utf-8' },
    });
  });
});

describe('webhooks: webhookDispatcher on real SQS events', () => {
  it("read the client's webhook flag and secret, try its webhook, and hide the message until its retry window", async () => {
    // Prepare: a state change of a record of each client with a webhook, as the bus's rule queues it. Their
    // webhooks are public https URLs this machine cannot reach: each try fails, and the dispatcher hides the message
    // for its retry.
    const queueUrl = aws.resources.queues.WebhookQueue.url;
    await aws.drain(queueUrl);
    const at = new Date().toISOString();
    const hooked = clientsConfig.clients.filter((client) => client.webhook).map((client) => client.name);
    for (const client of hooked) {
      // A record id as records have them: the dispatcher notes each attempt in the record's story (none here).
      const recordId = randomBytes(16).toString('hex');
      const detail = {
        eventId: `${recordId}:${at}`,
        recordId,
        kind: 'caseRecord',
        client,
        state: 'delivered',
        previousState: 'accepted',
        attempts: 1,
        sequence: 1,
        at,
        acceptedAt: at,
      };
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({
            'detail-type': 'Record state changed',
            source: 'dealer-gateway',
            detail,
          }),
        }),
      );
    }
    // Act
    const polled = await pollOnce({
      sqs: aws.sqs,
      queueUrl,
      handler: (event: SQSEvent) => invoke<SQSBatchResponse>('webhookDispatcher', event),
    });
    // Assess
    expect(hooked.length).toBeGreaterThan(0);
    expect(polled).toEqual({ received: hooked.length, deleted: 0, failed: hooked.length });
  }, 60_000);
});

// The reconciler is the one scheduled function. Another one added fails "every function of serverless.yml ran in a
// scenario above" until it has a scenario of its own here (an invocation that asserts nothing would hide that).
describe('scheduled functions: reconciler', () => {
  it('queue again the accepted records nobody queued or worked on in time', async () => {
    const [saleId] = salesIds(
      await api('salesRegistration', jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })])),
    );
    const { CrmId } = (await api('crmCase', jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })))).body;
    await Promise.all([makeDue(saleId), makeDue(CrmId)]);
    const reconciler = functions.find((f) => f.name === 'reconciler') as DeployedFunction;
    await invoke('reconciler', scheduledEvent(reconciler));
    const sales = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    const cases = await aws.drain(aws.resources.queues.CaseQueue.url);
    // Intake's message and the reconciler's copy.
    expect(sales.filter((m) => m.id === saleId)).toHaveLength(2);
    expect(cases.filter((m) => m.id === CrmId)).toHaveLength(2);
  });

  it('publish the state changes a worker could not publish, and remove personal data whose time has come', async () => {
    // Prepare: a record of each kind settled while the bus refused its worker (the event stays in the record's
    // outbox), then due for the reconciler's publishing and for the removal of its personal fields.
    for (const p of pipelines()) recorder.fail(p.worker, 'PutEvents');
    const ids = await Promise.all(
      pipelines().map(async (p) => {
        await p.drain();
        const id = await p.accept();
        await p.settle(id);
        return id;
      }),
    ).finally(recorder.heal);
    const past = new Date(Date.now() - 60_000).toISOString();
    const table = aws.resources.tables.RecordsTable.name;
    for (const id of ids) {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: id } },
          UpdateExpression: 'SET eventsDueAt = :past, purgeAt = :past',
          ConditionExpression: 'attribute_exists(pendingEvents) AND attribute_exists(purgeAt)',
          ExpressionAttributeValues: { ':past': { S: past } },
        }),
      );
    }
    const published = recorder.putEvents.length;
    // Act
    const reconciler = functions.find((f) => f.name === 'reconciler') as DeployedFunction;
    await invoke('reconciler', scheduledEvent(reconciler));
    // Assess
    const recordIds = recorder.putEvents
      .slice(published)
      .map((entry) => (JSON.parse(String(entry.Detail)) as { recordId: string }).recordId);
    expect(recordIds.sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const { Item } = await dynamo.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: id } }, ConsistentRead: true }),
      );
      expect(Item?.pendingEvents, id).toBeUndefined();
      expect(Item?.personalDataRemovedAt?.S, id).toBeDefined();
    }
  }, 60_000);
});

/** Every IAM request of the calls recorded for a function, with the call it comes from. */
const recordedRequests = (fn: DeployedFunction) =>
  recordedRequestsOf(recorder.calls, fn.name, aws.resources, refs);

/**
 * The allow-list: what AWS itself does with a function's role, which no recorder sees. `required` must be
 * allowed (or the function cannot log, or its event source cannot poll); `optional` may be granted unused.
 */
const onBehalfOf = (fn: DeployedFunction): { required: IamRequest[]; optional: IamRequest[] } => {
  const logStream = `${refs.arnPrefix('logs')}:log-group:/aws/lambda/${fn.functionName}:log-stream:2026/01/01/[$LATEST]0123456789abcdef`;
  const queues = fn.sqsSources.map((id) => refs.attribute(id, 'Arn'));
  return {
    required: [
      // Lambda writes the function's output to its log group (the group itself is a resource of the template).
      { action: 'logs:CreateLogStream', resource: logStream },
      { action: 'logs:PutLogEvents', resource: logStream },
      // An SQS event source mapping polls with the function's role: it receives, deletes what the function
      // did not report failed, and reads the queue's attributes.
      ...queues.flatMap((resource) =>
        ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'].map((action) => ({
          action,
          resource,
        })),
      ),
    ],
    // The event source may also change visibility (the worker changes it itself too, recorded above).
    optional: [
      ...queues.map((resource) => ({ action: 'sqs:ChangeMessageVisibility', resource })),
      // Not AWS's but the dispatcher's own: it writes a client's webhook flag only when the webhook answers 410,
      // which a public https URL cannot here (tests/webhooks/dispatcher.test.ts makes it, against dynalite).
      ...(fn.name === 'webhookDispatcher'
        ? [
            {
              action: 'dynamodb:PutItem',
              resource: refs.attribute('RecordsTable', 'Arn'),
              context: {
                'dynamodb:LeadingKeys': [`webhook#${webhookClient()}`],
                'dynamodb:Attributes': ['pk', 'webhookDisabledAt', 'webhookDisabledStatus'],
                'dynamodb:ReturnValues': ['NONE'],
              },
            },
          ]
        : []),
    ],
  };
};

/** The first client with a webhook (config/clients.json), whose flag the dispatcher's scenario reads. */
const webhookClient = () =>
  clientsConfig.clients.find((c) => c.webhook)?.name ?? '(no client with a webhook)';

/** A readable table of a function's recorded calls, for failure messages and PRINT_AWS_CALLS=1. */
const callTable = (fn: DeployedFunction): string => {
  const counts = new Map<string, number>();
  for (const r of recordedRequests(fn)) {
    const keys = r.context?.['dynamodb:LeadingKeys'];
    const shapes = keys ? ` keys ${[...new Set(keys.map(keyShapeOf))].join(', ')}` : '';
    const select = ['dynamodb:Select', 'dynamodb:ReturnValues']
      .flatMap((key) => r.context?.[key] ?? [])
      .map((value) => ` ${value}`)
      .join('');
    const line = `${r.action} on ${r.resource}${shapes}${select}`;
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return [...counts].map(([line, n]) => `  ${line} (${n}x)`).join('\n') || '  (no AWS calls)';
};

describe('each function’s role in the packaged template', () => {
  it('every function of serverless.yml is mapped to its handler file, which its deployed bundle is built from', async () => {
    for (const fn of functions) {
      const map = JSON.parse(await readFile(join(codeDir, fn.name, `${fn.bundleEntry}.map`), 'utf8'));
      expect(
        (map.sources as string[]).some((source) => source.endsWith(fn.source)),
        `${fn.name}: ${fn.source}`,
      ).toBe(true);
    }
    expect(functions.map((fn) => fn.name)).toEqual(FUNCTION_NAMES);
  });

  it('every function of serverless.yml ran in a scenario above', () => {
    expect(FUNCTION_NAMES.filter((name) => !invoked.has(name))).toEqual([]);
    if (process.env.PRINT_AWS_CALLS) {
      for (const fn of functions) process.stdout.write(`${fn.name} (${fn.source}):\n${callTable(fn)}\n`);
    }
  });

  it('every recorded call was signed by a function and read', () => {
    const names = new Set(FUNCTION_NAMES);
    const strays = recorder.calls.filter((c) => !names.has(c.caller) || c.problem);
    expect(
      strays.map((c) => `${c.caller}: ${c.service} ${c.operation}: ${c.problem ?? 'unknown caller'}`),
    ).toEqual([]);
  });

  it.for(FUNCTION_NAMES)('%s: allows every call the function made and everything AWS does for it', (name) => {
    const fn = functions.find((f) => f.name === name) as DeployedFunction;
    const statements = roleStatements(template, fn.roleId, refs);
    const denied = [...recordedRequests(fn), ...onBehalfOf(fn).required]
      .filter((request) => !isAllowed(statements, request))
      .map((r) => `${r.action} on ${r.resource}${'call' in r ? ` (${r.call})` : ' (AWS on its behalf)'}`);
    expect([...new Set(denied)], `${fn.roleId} must allow these; ${name} called:\n${callTable(fn)}`).toEqual(
      [],
    );
  });

  it.for(FUNCTION_NAMES)('%s: grants nothing that no call used', (name) => {
    const fn = functions.find((f) => f.name === name) as DeployedFunction;
    const statements = roleStatements(template, fn.roleId, refs);
    const { required, optional } = onBehalfOf(fn);
    const unused = unusedGrants(statements, [...recordedRequests(fn), ...required, ...optional]);
    expect(unused, `${fn.roleId} grants these unused; ${name} called:\n${callTable(fn)}`).toEqual([]);
  });
});

/**
 * The functions that need a record's personal fields (`record`), and why. Every other function's role must not let
 * it read them (IAM's dynamodb:LeadingKeys and dynamodb:Attributes, serverless.yml); each of these must read them
 * in a scenario above, or it is no longer one of them.
 */
const PERSONAL_DATA_READERS: Record<string, string> = {
  erpDelivery: 'sends the fields to SAP',
  crmDelivery: 'sends the fields to Salesforce',
  reconciler: "the purge removes the fields; an event names a sale's frame number and dealer",
  consoleApi: 'the audited "Customer" section of a record shows them to support and operators',
};

/** The indexes of the records table that project `record` (none should: they would hand it to any Query). */
const indexesWithPersonalFields = (): string[] => {
  const table = template.Resources.RecordsTable.Properties as {
    GlobalSecondaryIndexes?: {
      IndexName: string;
      Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
    }[];
  };
  return (table.GlobalSecondaryIndexes ?? [])
    .filter(
      ({ Projection }) =>
        Projection.ProjectionType === 'ALL' ||
        (Projection.NonKeyAttributes ?? []).includes(PERSONAL_ATTRIBUTE),
    )
    .map(({ IndexName }) => `${refs.attribute('RecordsTable', 'Arn')}/index/${IndexName}`);
};

/** What a function's calls (and its optional grants) did to keys of each shape: `<action> <shape>`. */
const touchedShapes = (fn: DeployedFunction): Set<string> =>
  new Set(
    [...recordedRequests(fn), ...onBehalfOf(fn).optional].flatMap((r) =>
      (r.context?.['dynamodb:LeadingKeys'] ?? []).map((key) => `${r.action} ${keyShapeOf(key)}`),
    ),
  );

describe('what each role lets its function reach of the records table', () => {
  it.for(FUNCTION_NAMES)('%s: reaches only the shapes of key its calls name', (name) => {
    // Prepare
    const fn = functions.find((f) => f.name === name) as DeployedFunction;
    const statements = roleStatements(template, fn.roleId, refs);
    const touched = touchedShapes(fn);
    // Act
    const beyond = keyShapeProbes(refs.attribute('RecordsTable', 'Arn'))
      .filter((probe) => isAllowed(statements, probe))
      .map((probe) => `${probe.action} ${probe.shape}`)
      .filter((reach) => !touched.has(reach));
    // Assess
    expect(beyond, `${fn.roleId} lets ${name} reach these keys; it called:\n${callTable(fn)}`).toEqual([]);
  });

  it("webhookDispatcher: reaches its clients' webhook flags and summaries and records' webhookStory, and no other key", () => {
    // Prepare
    const fn = functions.find((f) => f.name === 'webhookDispatcher') as DeployedFunction;
    const statements = roleStatements(template, fn.roleId, refs);
    const table = refs.attribute('RecordsTable', 'Arn');
    const probes = keyShapeProbes(table);
    const otherClient = {
      action: 'dynamodb:GetItem',
      resource: table,
      context: { 'dynamodb:LeadingKeys': ['webhook#someone-else'] },
    };
    // Act
    const reached = probes.filter((probe) => isAllowed(statements, probe));
    // Assess
    // ... its summaries, and a record's `webhookStory`, each attempt noted there (the console's timeline).
    expect([...new Set(reached.map((probe) => probe.shape))]).toEqual([
      'record id',
      'webhook#<client>',
      'webhookSummary#<client>',
    ]);
    expect(isAllowed(statements, otherClient)).toBe(false);
    expect(
      personalFieldReads(table, indexesWithPersonalFields()).filter((p) => isAllowed(statements, p)),
    ).toEqual([]);
  });

  it.for(FUNCTION_NAMES)("%s: reads a record's personal fields only if it needs them", (name) => {
    // Prepare
    const fn = functions.find((f) => f.name === name) as DeployedFunction;
    const statements = roleStatements(template, fn.roleId, refs);
    const probes = personalFieldReads(refs.attribute('RecordsTable', 'Arn'), indexesWithPersonalFields());
    // Act
    const allowed = probes
      .filter((probe) => isAllowed(statements, probe))
      .map((probe) => `${probe.action} on ${probe.resource} ${JSON.stringify(probe.context)}`);
    const reads = recordedRequests(fn).filter(readsPersonalFields);
    // Assess
    if (PERSONAL_DATA_READERS[name]) {
      expect(
        reads.length,
        `${name} ${PERSONAL_DATA_READERS[name]}, yet read no record's fields`,
      ).toBeGreaterThan(0);
    } else {
      expect(allowed, `${fn.roleId} lets ${name} read \`${PERSONAL_ATTRIBUTE}\` it never needs`).toEqual([]);
    }
  });
});
