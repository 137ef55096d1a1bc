/**
 * The delivery side of `npm start`: built-in SAP and Salesforce sandboxes unless ERP_BASE_URL / CRM_BASE_URL
 * are set, the records still `accepted` queued again, and a poller per queue that invokes the worker handler
 * as the Lambda event source would (batch size, batching window, concurrency and visibility as serverless.yml
 * deploys them), the queue serving the clients fairly as SQS fair queues do (local/fairQueue.ts), and at most one
 * batch per probe period for a held downstream, alone in flight.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { reconcileOpenRecords } from '../lib/reconcile/reconcile.ts';
import { runReconciler } from '../lib/reconcile/reconcilerRun.ts';
import { positiveInteger } from '../lib/settings/parsers.ts';
import { outageSettings } from '../lib/settings/settings.ts';
import { type SalesforceSandbox, startSalesforceSandbox } from '../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../sandbox/sapSandbox.ts';
import { localClientConfig } from './aws.ts';
import { loadHandler } from './handlerEntry.ts';
import { cachedHoldStates, holdGate } from './holdGate.ts';
import { startPoller } from './queuePoller.ts';
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
 * The reconciler as the scheduled function runs on AWS, every RECONCILE_INTERVAL_SECONDS (default 60) here: the
 * same run (lib/reconcile/reconcilerRun.ts), reported as lines of the runner's output.
 */
const startReconciler = () => {
  const seconds = positiveInteger('RECONCILE_INTERVAL_SECONDS', process.env.RECONCILE_INTERVAL_SECONDS, 60);
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      try {
        const { reconciled, events, purge } = await runReconciler();
        if ('error' in events) log(`reconciler: events: ${messageOf(events.error)}`);
        else if (events.published > 0)
          log(`reconciler: published ${events.published} state change(s) a worker had left unpublished`);
        if ('error' in purge) log(`reconciler: purge: ${messageOf(purge.error)}`);
        else {
          const removed = purge.purged.salesRegistration + purge.purged.caseRecord;
          if (removed > 0) log(`reconciler: removed the personal data of ${removed} settled record(s)`);
        }
        if ('error' in reconciled) log(`reconciler: queue again: ${messageOf(reconciled.error)}`);
        else {
          const probes = reconciled.probes.salesRegistration + reconciled.probes.caseRecord;
          const count = reconciled.requeued.salesRegistration + reconciled.requeued.caseRecord - probes;
          if (count > 0) log(`reconciler: queued again ${count} record(s) nobody had queued in time`);
          if (probes > 0) log(`reconciler: queued ${probes} record(s) of a held downstream for its probe`);
        }
      } catch (error) {
        log(`reconciler: ${messageOf(error)}`);
      }
    });
  }, seconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
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
  const reconciler = startReconciler();
  const ttlSweeper = startTtlSweeper({ log });

  const sqs = new SQSClient({
    ...localClientConfig(proxies.AWS_ENDPOINT_URL_SQS ?? stack.sqsEndpoint),
    // The poller stands in for Lambda's event source, which retries its own calls.
    ...(proxies.AWS_ENDPOINT_URL_SQS ? { maxAttempts: 3 } : {}),
    useQueueUrlAsEndpoint: false,
  });
  // Both holds in one read, at most once per the workers' own cache time (and at least a second apart).
  const hold = outageSettings();
  const states = cachedHoldStates(Math.max(1, hold.cacheSeconds) * 1000);
  const deliveryQueues = [
    ['SalesRegistrationQueue', 'erp'],
    ['CaseQueue', 'crm'],
  ] as const;
  // Batch size, window, concurrency and the function's handler as serverless.yml gives the event source on AWS.
  const sources = await Promise.all(
    deliveryQueues.map(async ([queueId]) => {
      const source = stack.eventSources[queueId];
      if (!source) throw new Error(`serverless.yml: no sqs event source reads ${queueId}`);
      return { source, handler: await loadHandler<SqsHandler>(source.handler) };
    }),
  );
  const pollers = deliveryQueues.map(([queueId, downstream], index) => {
    const queue = stack.queues[queueId];
    const { source, handler } = sources[index];
    return startPoller({
      sqs,
      queueUrl: queue.url,
      handler,
      functionName: source.functionName,
      batchSize: source.batchSize,
      batchingWindowSeconds: source.batchingWindowSeconds,
      maximumConcurrency: source.maximumConcurrency,
      gate: holdGate({ downstream, probeSeconds: hold.probeSeconds, states }),
      onError: (error) =>
        log(`poller ${queue.name}: ${error instanceof Error ? error.message : String(error)}`),
    });
  });

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
      env: stack.env,
      queues: stack.queues,
    }),
  );

  return async () => {
    await Promise.all([reconciler.stop(), ttlSweeper.stop()]);
    await Promise.all(pollers.map((p) => p.stop()));
    sqs.destroy();
    await Promise.all([sandboxes.sap?.stop(), sandboxes.salesforce?.stop(), rm(runnerFile, { force: true })]);
  };
};
