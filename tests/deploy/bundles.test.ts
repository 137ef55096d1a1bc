import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKeys } from '../../testkit/apiKeys.ts';
import { apiEvent, jsonPost, statusGet } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { packagedTemplate, withPackageLock } from '../../testkit/packagedTemplate.ts';
import { awsOk, startScriptedAws } from '../../testkit/scriptedAws.ts';

/*
 * The API functions' deployed artifacts (the zips `npm run package` writes), unzipped and run in a fresh Node
 * process as Lambda runs them: against fauxqs and dynalite, with the API keys read from a Secrets Manager
 * endpoint (a scripted server), through the JSON-protocol clients those bundles carry instead of the SDK.
 */
const SALES = '/erp/sales_registration';
const CASE = '/crm/case';
const API_FUNCTIONS = ['salesRegistration', 'crmCase', 'recordStatus'] as const;
const WORKERS = ['erpDelivery', 'crmDelivery', 'reconciler'] as const;
/** Serves the committed openapi.json: no build tooling at run time. */
const OPEN_API = 'openApi';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let secrets: Awaited<ReturnType<typeof startScriptedAws>>;
let unpacked: string;
const sources: Record<string, string[]> = {};

/** Runs handler invocations in one fresh process of the unpacked bundles; returns their answers. */
const runBundles = async (
  calls: {
    fn: (typeof API_FUNCTIONS)[number] | 'reconciler' | typeof OPEN_API;
    event: APIGatewayProxyEvent | object;
  }[],
  env: Record<string, string | undefined> = {},
): Promise<{ statusCode: number; body: string }[]> => {
  const callsFile = join(unpacked, `calls-${Date.now()}-${Math.random()}.json`);
  const answersFile = `${callsFile}.answers`;
  await writeFile(callsFile, JSON.stringify(calls));
  const childEnv = Object.fromEntries(
    Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined),
  );
  await promisify(execFile)(process.execPath, [join(unpacked, 'invoke.mjs'), callsFile, answersFile], {
    env: childEnv as NodeJS.ProcessEnv,
  });
  return JSON.parse(await readFile(answersFile, 'utf8'));
};

const invoker = `
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
const [callsFile, answersFile] = process.argv.slice(2);
const calls = JSON.parse(await readFile(callsFile, 'utf8'));
const answers = [];
for (const { fn, event } of calls) {
  const { handler } = await import(join(import.meta.dirname, fn, 'functions', fn + '.mjs'));
  const context = { awsRequestId: event.requestContext?.requestId ?? 'scheduled', functionName: fn, getRemainingTimeInMillis: () => 10000 };
  const { statusCode, body } = (await handler(event, context)) ?? {};
  answers.push({ statusCode, body });
}
await writeFile(answersFile, JSON.stringify(answers));
`;

beforeAll(async () => {
  aws = await isolatedAws();
  secrets = await startScriptedAws([
    awsOk({
      SecretString: JSON.stringify({
        'example-dealer': testKeys.dealer,
        'example-web-forms': testKeys.webForms,
      }),
    }),
  ]);
  unpacked = await mkdtemp(join(tmpdir(), 'dealer-gateway-bundles-'));
  await packagedTemplate();
  // The zips are rewritten by any test file that packages: read them under the same lock.
  await withPackageLock(async () => {
    for (const fn of [...API_FUNCTIONS, ...WORKERS, OPEN_API]) {
      const zip = unzipSync(await readFile(join(process.cwd(), '.esbuild', `${fn}.zip`)));
      sources[fn] = [];
      for (const [file, bytes] of Object.entries(zip)) {
        if (file.endsWith('.map')) sources[fn].push(...JSON.parse(new TextDecoder().decode(bytes)).sources);
        await mkdir(dirname(join(unpacked, fn, file)), { recursive: true });
        await writeFile(join(unpacked, fn, file), bytes);
      }
    }
  });
  await writeFile(join(unpacked, 'invoke.mjs'), invoker);
}, 120_000);

afterAll(async () => {
  await secrets.stop();
  await rm(unpacked, { recursive: true, force: true });
});

/** As the functions run on AWS: keys from Secrets Manager, no key file, the bundles' own source maps. */
const deployedEnv = () => ({
  API_KEYS_FILE: undefined,
  API_KEYS_SECRET: 'dealer-gateway/api-keys',
  AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
  NODE_OPTIONS: '--enable-source-maps',
});

describe('the API functions as deployed', () => {
  it('carry the JSON-protocol clients and none of the AWS SDK but its signer; the workers only the SDK for SSM', () => {
    // The SDK's signer (@smithy/signature-v4) and the parts of @smithy/core it imports are not a client.
    const signer = /node_modules\/@smithy\/(signature-v4|core)\//;
    const sdk = (fn: string) =>
      sources[fn].filter((s) => /node_modules\/(@aws-sdk\/client-|@smithy\/)/.test(s) && !signer.test(s));
    for (const fn of [...API_FUNCTIONS, ...WORKERS]) {
      expect(
        sources[fn].some((s) => s.includes('lib/aws/jsonProtocol/')),
        fn,
      ).toBe(true);
    }
    for (const fn of [...API_FUNCTIONS, 'reconciler']) expect(sdk(fn), fn).toEqual([]);
    // Powertools Parameters reads the workers' SSM parameters with its own SDK client; nothing else of the SDK.
    for (const fn of ['erpDelivery', 'crmDelivery']) {
      const clients = new Set(sdk(fn).flatMap((s) => /@aws-sdk\/(client-[a-z-]+)\//.exec(s)?.[1] ?? []));
      expect([...clients], fn).toEqual(['client-ssm']);
    }
  });

  it("sign every AWS request with the SDK's own signer (@smithy/signature-v4), not one of ours", () => {
    // Prepare: the functions whose AWS calls go through lib/aws/jsonProtocol.
    const functions = [...API_FUNCTIONS, ...WORKERS].filter((fn) =>
      sources[fn]?.some((s) => s.includes('lib/aws/jsonProtocol/')),
    );
    // Act
    const withoutSigner = functions.filter(
      (fn) => !sources[fn].some((s) => s.includes('node_modules/@smithy/signature-v4/')),
    );
    // Assess
    expect(functions.length).toBeGreaterThan(0);
    expect(withoutSigner).toEqual([]);
  });

  it('accept, queue, recognise a duplicate, show the status and refuse an unknown key', async () => {
    // Prepare
    const sale = salesRegistrationInput({ FrameNum: uniqueFrame() });
    const crmCase = caseInput({ frameNo: uniqueFrame() });
    // Act
    const [accepted, duplicate, caseAccepted, refused] = await runBundles(
      [
        { fn: 'salesRegistration', event: jsonPost(SALES, [sale]) },
        { fn: 'salesRegistration', event: jsonPost(SALES, [sale]) },
        { fn: 'crmCase', event: jsonPost(CASE, crmCase) },
        { fn: 'salesRegistration', event: jsonPost(SALES, [sale], { 'x-api-key': 'not-a-key' }) },
      ],
      deployedEnv(),
    );
    const id = JSON.parse(accepted.body).registrations[0].id;
    const { CrmId } = JSON.parse(caseAccepted.body);
    const [status] = await runBundles(
      [{ fn: 'recordStatus', event: statusGet(`${SALES}/${id}`, { id }) }],
      deployedEnv(),
    );
    const salesMessages = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    const caseMessages = await aws.drain(aws.resources.queues.CaseQueue.url);
    // Assess
    expect([accepted.statusCode, duplicate.statusCode, caseAccepted.statusCode]).toEqual([200, 200, 200]);
    expect(JSON.parse(duplicate.body).registrations[0].id).toBe(id);
    expect(refused.statusCode).toBe(403);
    expect(salesMessages.map((m) => m.id)).toEqual([id]);
    expect(caseMessages.map((m) => m.id)).toEqual([CrmId]);
    expect(status.statusCode).toBe(200);
    expect(JSON.parse(status.body)).toMatchObject({ id, status: 'accepted' });
    const secretCalls = secrets.requests.filter(
      (r) => r.headers['x-amz-target'] === 'secretsmanager.GetSecretValue',
    );
    expect(secretCalls.length).toBeGreaterThan(0);
    expect(JSON.parse(secretCalls[0].body)).toMatchObject({ SecretId: 'dealer-gateway/api-keys' });
  });

  it("queue each record with its client as the message's group, the tenant of SQS fair queues", async () => {
    // Prepare: the SQS calls of the bundles pass a recording proxy.
    const proxy = await startHookedProxy(aws.sqsEndpoint);
    const sales = [1, 2].map(() => salesRegistrationInput({ FrameNum: uniqueFrame() }));
    // Act
    const [salesAccepted, caseAccepted] = await runBundles(
      [
        { fn: 'salesRegistration', event: jsonPost(SALES, sales) },
        { fn: 'crmCase', event: jsonPost(CASE, caseInput({ frameNo: uniqueFrame() })) },
      ],
      { ...deployedEnv(), AWS_ENDPOINT_URL_SQS: proxy.endpoint },
    );
    await proxy.stop();
    const salesMessages = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    const caseMessages = await aws.drain(aws.resources.queues.CaseQueue.url);
    // Assess
    expect([salesAccepted.statusCode, caseAccepted.statusCode]).toEqual([200, 200]);
    const entries = proxy.requests
      .filter((r) => r.operation === 'SendMessageBatch')
      .flatMap((r) => r.body.Entries as { MessageGroupId?: string; MessageBody: string }[]);
    const groups = entries.map((e) => [JSON.parse(e.MessageBody).id, e.MessageGroupId]);
    expect(groups).toEqual([
      ...salesMessages.map((m) => [m.id, 'example-dealer']),
      ...caseMessages.map((m) => [m.id, 'example-web-forms']),
    ]);
    expect(groups).toHaveLength(3);
    expect([...salesMessages, ...caseMessages].map((m) => m.owner)).toEqual([
      'example-dealer',
      'example-dealer',
      'example-web-forms',
    ]);
  });

  it('answer 503 when SQS cannot be reached; the retry gets 200 and queues the record, as does the packaged reconciler while no worker took it', async () => {
    // Prepare
    const sale = salesRegistrationInput({ FrameNum: uniqueFrame() });
    const closed = await startScriptedAws([awsOk()]);
    await closed.stop();
    // Act
    // The record is stored, then SQS fails: due for the reconciler a second later (RECONCILE_AFTER_SECONDS).
    const [unavailable] = await runBundles([{ fn: 'salesRegistration', event: jsonPost(SALES, [sale]) }], {
      ...deployedEnv(),
      AWS_ENDPOINT_URL_SQS: closed.endpoint,
      RECONCILE_AFTER_SECONDS: '1',
    });
    const [retried] = await runBundles(
      [{ fn: 'salesRegistration', event: jsonPost(SALES, [sale]) }],
      deployedEnv(),
    );
    const queuedByRetry = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await runBundles([{ fn: 'reconciler', event: {} }], deployedEnv());
    const queuedByReconciler = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    // Assess
    expect(unavailable.statusCode).toBe(503);
    expect(retried.statusCode).toBe(200);
    // The first try marked the record it stored but could not queue: the retry queues it at once.
    const id = JSON.parse(retried.body).registrations[0].id;
    expect(queuedByRetry.map((m) => m.id)).toEqual([id]);
    expect(queuedByReconciler.map((m) => m.id)).toEqual([id]);
  });
});

describe('the openApi function as deployed', () => {
  it('carries the committed openapi.json and none of the build tooling, and serves the document', async () => {
    // Prepare
    const committed = JSON.parse(await readFile(join(process.cwd(), 'openapi.json'), 'utf8'));
    const projectSources = sources[OPEN_API]
      .filter((s) => !s.includes('node_modules/') && !s.startsWith('builtin-'))
      .map((s) => s.replace(/^(\.\.\/)+/, ''));
    // Act
    const [answer] = await runBundles(
      [
        {
          fn: OPEN_API,
          event: apiEvent({ httpMethod: 'GET', path: '/openapi.json', resource: '/openapi.json' }),
        },
      ],
      deployedEnv(),
    );
    // Assess
    expect(projectSources).toContain('openapi.json');
    expect(projectSources.filter((s) => /^(scripts|schemas|lib\/(validation|intake))\//.test(s))).toEqual([]);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual(committed);
  });
});
