/**
 * The functions of `npm start` that AWS invokes from queues and schedules (the HTTP ones are serverless-offline's):
 * built-in SAP and Salesforce sandboxes unless ERP_BASE_URL / CRM_BASE_URL are set, the records still `accepted`
 * queued again, a poller per SQS event source of serverless.yml that invokes the function's own handler as the
 * Lambda event source would (batch size, batching window, concurrency and visibility as serverless.yml deploys
 * them: the delivery workers and the webhook dispatcher), the queue serving the clients fairly as SQS fair queues do
 * (local/emulators/fauxqs/fairQueue.ts), at most one batch per probe period for a held downstream, alone in flight, and a timer per
 * schedule event invoking its function's handler (the reconciler).
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { reconcileOpenRecords } from '../lib/reconcile/reconcile.ts';
import { positiveInteger } from '../lib/settings/parsers.ts';
import { outageSettings } from '../lib/settings/settings.ts';
import { type SalesforceSandbox, startSalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../sandbox/sapSandbox.ts';
import { localClientConfig } from './aws.ts';
import { type LocalSource, localFunctionSources } from './functionSources.ts';
import { loadHandler } from './handlerEntry.ts';
import { cachedHoldStates, holdGate } from './holdGate.ts';
import { startPoller } from './queuePoller.ts';
import { type ScheduledHandler, startSchedule } from './schedule.ts';
import { webhookSecretsPrefixOf } from './serverlessConfig.ts';
import type { SqsHandler } from './sqsBatch.ts';
import type { LocalStack } from './stack.ts';
import { startTtlSweeper } from './ttlSweeper.ts';

const log = (line: string) => process.stderr.write(`[local] ${line}\n`);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Settings for the in-process worker: the sandbox's, unless the ERP / CRM is configured. */
const startSandboxes = async (): Promise<{ sap?: SapSandbox; salesforce?: SalesforceSandbox }> => {
  const [sap, salesforce] = await Promise.all([
    process.env.ERP_BASE_URL ? undefined : startSapSandbox(),
    process.env.CRM_BASE_URL ? undefined : startSalesforceSandbox(),
  ]);
  if (sap) {
    Object.assign(process.env, {
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: sap.username,
      ERP_PASSWORD: sap.password,
    });
    log(`SAP sandbox: ${sap.url} (registrations: ${sap.url}/_sandbox/registrations)`);
  }
  if (salesforce) {
    Object.assign(process.env, {
      CRM_BASE_URL: salesforce.url,
      CRM_CLIENT_ID: salesforce.clientId,
      CRM_CLIENT_SECRET: salesforce.clientSecret,
    });
    log(`Salesforce sandbox: ${salesforce.url} (cases: ${salesforce.url}/_sandbox/cases)`);
  }
  return { sap, salesforce };
};

/**
 * The worker's AWS endpoints when LOCAL_DELIVERY_PROXY_SQS / _DYNAMODB / _EVENTBRIDGE name a fault proxy (npm run
 * soak); empty otherwise.
 *
 * @example
 * deliveryProxies({ LOCAL_DELIVERY_PROXY_SQS: 'http://127.0.0.1:4001' }); // { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4001' }
 */
export const deliveryProxies = (env: NodeJS.ProcessEnv): Record<string, string> => ({
  ...(env.LOCAL_DELIVERY_PROXY_SQS ? { AWS_ENDPOINT_URL_SQS: env.LOCAL_DELIVERY_PROXY_SQS } : {}),
  ...(env.LOCAL_DELIVERY_PROXY_DYNAMODB
    ? { AWS_ENDPOINT_URL_DYNAMODB: env.LOCAL_DELIVERY_PROXY_DYNAMODB }
    : {}),
  ...(env.LOCAL_DELIVERY_PROXY_EVENTBRIDGE
    ? { AWS_ENDPOINT_URL_EVENTBRIDGE: env.LOCAL_DELIVERY_PROXY_EVENTBRIDGE }
    : {}),
});

/** The delivery queues' downstreams: their pollers hold back while it is held (local/holdGate.ts). */
const holdOfQueue: Record<string, 'erp' | 'crm'> = { SalesRegistrationQueue: 'erp', CaseQueue: 'crm' };

/** A source as runner.json lists it: the function, its handler, and what invokes it. */
const describeSource = (source: LocalSource) => ({
  functionName: source.functionName,
  handler: source.handler,
  invokedBy:
    source.kind === 'http'
      ? `serverless-offline ${source.method} ${source.path}`
      : source.kind === 'sqs'
        ? `poller ${source.queueId}`
        : `schedule every ${source.rateSeconds} s`,
});

/**
 * The local runner's hook (LocalStackOptions.onStarted): starts delivery and returns what stops it.
 */
export const startLocalDelivery = async (stack: LocalStack): Promise<() => Promise<void>> => {
  // The worker runs in this process, against the same queues and table as the handlers in serverless-offline.
  Object.assign(process.env, stack.env);
  // npm run soak: the worker, the reconciler and their event publishing reach SQS, DynamoDB and the bus through
  // its fault proxies (runner.json keeps the emulators' own endpoints, for npm run records / redrive).
  const proxies = deliveryProxies(process.env);
  Object.assign(process.env, proxies);
  const sandboxes = await startSandboxes();

  // The queue lived in the last run's memory: every record still `accepted` is queued again (found through the
  // `open` index, no scan); a copy of one still being delivered waits for its lease.
  const { requeued } = await reconcileOpenRecords({ everyOpenRecord: true });
  const count = requeued.salesRegistration + requeued.caseRecord;
  if (count > 0) log(`queued again ${count} record(s) still accepted from the last run`);
  const ttlSweeper = startTtlSweeper({ log });

  const { sources, unserved } = localFunctionSources(stack.config);
  if (unserved.length > 0)
    throw new Error(
      `npm start cannot invoke ${unserved.map((u) => `${u.functionName} (${u.event}: ${u.why})`).join('; ')}`,
    );
  // The workers' settings here are the runner's (the sandboxes' credentials, which the template's `_PARAMETER`
  // names would replace); every other function gets its environment as serverless.yml resolves it, where this
  // process sets none (they share it, as the functions share no setting with different values).
  for (const source of sources) {
    if (source.kind === 'http' || (source.kind === 'sqs' && source.queueId in holdOfQueue)) continue;
    for (const [name, value] of Object.entries(
      stack.config.functions?.[source.functionName]?.environment ?? {},
    ))
      if (process.env[name] === undefined && typeof value !== 'object') process.env[name] = String(value);
  }

  const sqs = new SQSClient({
    ...localClientConfig(proxies.AWS_ENDPOINT_URL_SQS ?? stack.sqsEndpoint),
    // The poller stands in for Lambda's event source, which retries its own calls.
    ...(proxies.AWS_ENDPOINT_URL_SQS ? { maxAttempts: 3 } : {}),
    useQueueUrlAsEndpoint: false,
  });
  // Both holds in one read, at most once per the workers' own cache time (and at least a second apart).
  const hold = outageSettings();
  const states = cachedHoldStates(Math.max(1, hold.cacheSeconds) * 1000);
  const queued = sources.filter((source) => source.kind === 'sqs');
  // Batch size, window, concurrency and the function's handler as serverless.yml gives the event source on AWS.
  const handlers = await Promise.all(queued.map((source) => loadHandler<SqsHandler>(source.handler)));
  const pollers = queued.map((source, index) => {
    const queue = stack.queues[source.queueId];
    const downstream = holdOfQueue[source.queueId];
    const poller = startPoller({
      sqs,
      queueUrl: queue.url,
      handler: handlers[index],
      functionName: source.functionName,
      batchSize: source.settings.batchSize,
      batchingWindowSeconds: source.settings.batchingWindowSeconds,
      maximumConcurrency: source.settings.maximumConcurrency,
      ...(downstream ? { gate: holdGate({ downstream, probeSeconds: hold.probeSeconds, states }) } : {}),
      onError: (error) => log(`poller ${queue.name}: ${messageOf(error)}`),
    });
    return { source, stop: () => poller.stop() };
  });
  const scheduled = sources.filter((source) => source.kind === 'schedule');
  const schedules = await Promise.all(
    scheduled.map(async (source) => {
      const schedule = startSchedule({
        functionName: source.functionName,
        handler: await loadHandler<ScheduledHandler>(source.handler),
        // RECONCILE_INTERVAL_SECONDS (local only): sooner than the template's rate, for tests and the soak.
        seconds: positiveInteger(
          'RECONCILE_INTERVAL_SECONDS',
          process.env.RECONCILE_INTERVAL_SECONDS,
          source.rateSeconds,
        ),
        onError: (error) => log(`${source.functionName}: ${messageOf(error)}`),
      });
      return { source, stop: () => schedule.stop() };
    }),
  );

  // For `npm run redrive`, which talks to this process's queue.
  const runnerFile = join(stack.dataDir, 'runner.json');
  await writeFile(
    runnerFile,
    JSON.stringify({
      sqsEndpoint: stack.sqsEndpoint,
      dynamoEndpoint: stack.dynamoEndpoint,
      // The local EventBridge and the sandbox webhook receiver (GET <url>/hooks): also in env, for the handlers.
      eventBusUrl: stack.eventBusUrl,
      webhookReceiverUrl: stack.webhookReceiverUrl,
      // Where the local Secrets Manager serves the webhook secrets (npm run webhook-secret -- resend reads them).
      webhookSecretsPrefix: webhookSecretsPrefixOf(stack.config),
      env: stack.env,
      queues: stack.queues,
      // How this run invokes each function of serverless.yml: serverless-offline's routes, and the pollers and
      // schedules as started, not as planned (tests/e2e/webhooks.test.ts reads it).
      functions: [
        ...sources.filter((source) => source.kind === 'http'),
        ...pollers.map((poller) => poller.source),
        ...schedules.map((schedule) => schedule.source),
      ].map(describeSource),
    }),
  );

  return async () => {
    await Promise.all([...schedules.map((schedule) => schedule.stop()), ttlSweeper.stop()]);
    await Promise.all(pollers.map((p) => p.stop()));
    sqs.destroy();
    await Promise.all([sandboxes.sap?.stop(), sandboxes.salesforce?.stop(), rm(runnerFile, { force: true })]);
  };
};
