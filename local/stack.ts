/**
 * The whole service on one machine: SQS (fauxqs) and DynamoDB (dynalite) emulators in this process, the
 * queues and table serverless.yml deploys, and serverless-offline serving the HTTP API as a child process.
 * `scripts/start.ts` is the CLI around it; tests and the worker poller can call it directly.
 */
import { writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { localCredentials } from './aws.ts';
import { assertPatchedVersions } from './emulators/versionGate.ts';
import { type EventSourceSettings, eventSourcesOf } from './eventSources.ts';
import { type LocalQueueServer, startLocalQueue } from './localQueue.ts';
import { type LocalStoreServer, startLocalStore } from './localStore.ts';
import { describeExit, type OfflineProcess, startOffline } from './offline.ts';
import { type LocalConsoleUser, type LocalOidcProvider, startLocalOidcProvider } from './oidcProvider.ts';
import { freePorts, waitForHttp, waitForPortFree } from './ports.ts';
import { binDir, defaultDataDir, localRegion } from './project.ts';
import {
  createLocalResources,
  type LocalQueue,
  type LocalResources,
  type LocalTable,
  predictLocalEnv,
} from './resources.ts';
import {
  printServerlessConfig,
  type ResolvedServerlessConfig,
  readCachedServerlessConfig,
  webhookSecretsPrefixOf,
  writeCachedServerlessConfig,
} from './serverlessConfig.ts';
import { startTraceReceiver } from './traceReceiver.ts';
import { type LocalWebhooks, startLocalWebhooks } from './webhooks.ts';

/** Any HTTP status from this route means offline routes requests (it also warms the handler up). */
const readyCheckPath = '/erp/sales_registration/ready-check';

export interface LocalStackOptions {
  /** HTTP port of the API. Default 3000; 0 picks a free one. */
  port?: number;
  /** Where the DynamoDB data lives (`<dataDir>/dynamodb`). Default: `DATA_DIR`, else `<project>/.data`. */
  dataDir?: string;
  /** Extra environment for serverless-offline (and `osls print`), applied last, e.g. ERP_BASE_URL. */
  env?: Record<string, string>;
  /** Forward serverless-offline's output to stderr. Default: `DEBUG` is set. */
  debug?: boolean;
  /** How long to wait for the API to answer. Default 60 s. */
  readyTimeoutMs?: number;
  /** Aborting it during start-up stops what has started and rejects. */
  signal?: AbortSignal;
  /**
   * How ports that were free a moment ago are found (default: local/ports.ts `freePorts`). A test hands out a
   * port it holds first, to show a port taken between the choice and serverless-offline's bind is chosen again.
   */
  freePorts?: (count: number) => Promise<number[]>;
  /**
   * HOOK for the next step: runs once everything is up, before `startLocalStack` resolves (so before the
   * CLI prints `ready`). That is where (a) records whose status is still `accepted` are queued again and
   * (b) the poller that receives from the queues and invokes the worker handler is started. It may return
   * a function that stops what it started; `stop()` awaits it before anything else shuts down.
   */
  onStarted?: (stack: LocalStack) => Promise<(() => Promise<void>) | undefined | void>;
}

export interface LocalStack {
  /** http://localhost:<port>, the URL of the `ready:` line. */
  url: string;
  port: number;
  /** The SQS endpoint, e.g. http://127.0.0.1:41234. */
  sqsEndpoint: string;
  /** The DynamoDB endpoint, e.g. http://127.0.0.1:41235. */
  dynamoEndpoint: string;
  region: string;
  dataDir: string;
  /** The local EventBridge (AWS_ENDPOINT_URL_EVENTBRIDGE), e.g. http://127.0.0.1:41236. */
  eventBusUrl: string;
  /** The sandbox webhook receiver (LOCAL_WEBHOOK_RECEIVER_URL): GET <url>/hooks lists what arrived. */
  webhookReceiverUrl: string;
  /**
   * The console's sign-in: the local OpenID Connect provider (local/oidcProvider.ts, its issuer and the console's
   * client id, CONSOLE_ISSUER_URL and CONSOLE_CLIENT_ID of the handlers) and its development users of this start.
   */
  consoleSignIn: { issuer: string; clientId: string; users: LocalConsoleUser[] };
  /**
   * What was set on top of the inherited environment for serverless-offline: the provider.environment
   * references (SALES_REGISTRATION_QUEUE_URL, CASE_QUEUE_URL, RECORDS_TABLE, ...), AWS_ENDPOINT_URL_SQS,
   * AWS_ENDPOINT_URL_DYNAMODB, AWS_REGION, dummy AWS credentials, PORT, LOCAL_API_URL, OFFLINE_*_PORT and
   * `options.env`.
   */
  env: Record<string, string>;
  /** By CloudFormation logical id, e.g. queues.SalesRegistrationQueue.url, tables.RecordsTable.name. */
  queues: Record<string, LocalQueue>;
  tables: Record<string, LocalTable>;
  /** The worker's SQS event sources as serverless.yml declares them, by queue logical id (batch size, window). */
  eventSources: Record<string, EventSourceSettings>;
  /** serverless.yml as resolved for this run (`osls print`). */
  config: ResolvedServerlessConfig;
  /** serverless-offline's pid (the leader of its own process group). */
  offlinePid: number;
  /** Resolves, with the reason, if serverless-offline exits by itself (not through `stop()`). */
  crashed: Promise<Error>;
  /** Stops the hook's work, serverless-offline and the emulators. Idempotent. */
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const startedAt = Date.now();
  const debug = options.debug ?? Boolean(process.env.DEBUG);
  const timing = (step: string) => {
    if (debug) process.stderr.write(`[local] ${step} after ${Date.now() - startedAt} ms\n`);
  };
  const dataDir = options.dataDir ?? defaultDataDir();
  const { signal } = options;
  signal?.throwIfAborted();
  // Before anything starts: the emulators' patches were written for exact versions (local/emulators/README.md).
  assertPatchedVersions();

  let queue: LocalQueueServer | undefined;
  let store: LocalStoreServer | undefined;
  let webhooks: LocalWebhooks | undefined;
  let oidc: LocalOidcProvider | undefined;
  let traces: Awaited<ReturnType<typeof startTraceReceiver>> | undefined;
  let offline: OfflineProcess | undefined;
  let stopHook: (() => Promise<void>) | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const errors: unknown[] = [];
      const attempt = async (step: (() => Promise<unknown>) | undefined) => {
        try {
          await step?.();
        } catch (error) {
          errors.push(error);
        }
      };
      // First of all, so that a stack started meanwhile on the same data directory waits for this one.
      await attempt(async () => store?.markStopping());
      await attempt(stopHook);
      await attempt(async () => offline?.stop());
      await Promise.all([
        attempt(async () => queue?.close()),
        attempt(async () => store?.close()),
        attempt(async () => webhooks?.stop()),
        attempt(async () => oidc?.stop()),
        attempt(async () => traces?.stop()),
      ]);
      if (errors.length > 0) throw new AggregateError(errors, 'stopping the local stack failed');
    })();
    return stopping;
  };

  // Aborted during start-up (e.g. Ctrl-C): stopping already, before the step under way gives up.
  signal?.addEventListener('abort', () => void store?.markStopping(), { once: true });

  // `osls print` runs while everything else starts; a failure elsewhere ends it through this.
  const printAbort = new AbortController();
  try {
    // Inherited AWS_* settings (real profiles, tokens, endpoints) must not reach anything local.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_')),
    );
    const path = `${binDir}${delimiter}${process.env.PATH ?? ''}`;

    // `osls print` (~1.3 s) is the slowest step before offline (~2 s) can start. The emulators start
    // meanwhile, and offline too if the last print (cached) predicts the environment it needs.
    const printing = printServerlessConfig(
      { ...inherited, ...options.env, PATH: path },
      signal ? AbortSignal.any([signal, printAbort.signal]) : printAbort.signal,
    );
    printing.catch(() => {}); // awaited below, unless something else fails first
    const requestedPort = options.port ?? 3000;
    const pickPorts = options.freePorts ?? freePorts;
    // The data directory first: a stack stopping there (or killed) is waited for, and releases its port before
    // its data directory. Then the port: something else, or a stack on another data directory, may hold it.
    let locked = () => {};
    const storeStarting = startLocalStore(dataDir, { signal, onLocked: () => locked() });
    const dataDirLocked = new Promise<void>((resolve, reject) => {
      locked = resolve;
      storeStarting.catch(reject);
    });
    // allSettled, not all: on a failure, stop() must see every emulator that did start.
    const [queueServer, storeServer, ports, cached, localWebhooks, signIn] = await allSettled([
      startLocalQueue().then((server) => (queue = server)),
      storeStarting.then((server) => (store = server)),
      pickPorts(requestedPort === 0 ? 3 : 2),
      readCachedServerlessConfig(),
      // Once the data directory is ours: the webhook secrets live there.
      dataDirLocked.then(() => startLocalWebhooks({ dataDir })).then((started) => (webhooks = started)),
      // The console's sign-in provider: its issuer goes into the handlers' environment; the console it serves (its
      // redirect) once the API's port is final, below.
      startLocalOidcProvider().then((started) => (oidc = started)),
      requestedPort === 0 ? undefined : dataDirLocked.then(() => waitForPortFree(requestedPort, { signal })),
      // The spans, kept in the data directory (npm run records -- --trace), unless a collector of the developer's
      // own (OTEL_EXPORTER_OTLP_ENDPOINT, e.g. Jaeger) takes them.
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT || options.env?.OTEL_EXPORTER_OTLP_ENDPOINT
        ? undefined
        : dataDirLocked.then(() => startTraceReceiver({ dataDir })).then((started) => (traces = started)),
    ] as const);
    timing('emulators');
    signal?.throwIfAborted();
    // Ports the OS gave a moment ago: another process may bind one before serverless-offline does, which then
    // exits at once (EADDRINUSE); such a port is chosen again (below). A PORT the caller asked for is not.
    let port = requestedPort === 0 ? (ports.pop() as number) : requestedPort;
    let [lambdaPort, websocketPort] = ports;
    const chosenPorts = () => [lambdaPort, websocketPort, ...(requestedPort === 0 ? [port] : [])];
    const chooseAgain = async () => {
      const fresh = await pickPorts(requestedPort === 0 ? 3 : 2);
      if (requestedPort === 0) port = fresh.pop() as number;
      [lambdaPort, websocketPort] = fresh;
    };
    // LOCAL_API_PROXY_SQS / _DYNAMODB (npm run soak): the API handlers reach the emulators through a proxy,
    // which reads their endpoints from localEndpointsFile. Offline's environment only (`env` keeps them).
    // LOCAL_DELIVERY_PROXY_* (local/delivery.ts) do the same for the worker, the reconciler and the bus.
    const apiProxies = apiProxyEnv({ ...process.env, ...options.env });
    if (Object.keys(apiProxies).length > 0 || hasDeliveryProxy({ ...process.env, ...options.env })) {
      const endpoints = {
        sqs: queueServer.endpoint,
        dynamodb: storeServer.endpoint,
        eventbridge: localWebhooks.bus.url,
      };
      await writeFile(localEndpointsFile(dataDir), JSON.stringify(endpoints));
    }

    const localEnv = (references: Record<string, string>): Record<string, string> => ({
      ...references,
      AWS_ENDPOINT_URL_SQS: queueServer.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: storeServer.endpoint,
      AWS_REGION: localRegion,
      AWS_DEFAULT_REGION: localRegion,
      AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
      PORT: String(port),
      // The URL GET /openapi.json names as its local server (functions/openApi.ts).
      LOCAL_API_URL: `http://localhost:${port}`,
      OFFLINE_LAMBDA_PORT: String(lambdaPort),
      OFFLINE_WEBSOCKET_PORT: String(websocketPort),
      // No CloudWatch here: the console's "Activity" page counts from the store (lib/console/activity).
      CONSOLE_ACTIVITY_SOURCE: 'store',
      // No X-Ray here (serverless.yml's `xray` is AWS's): the spans go to OTEL_EXPORTER_OTLP_ENDPOINT, unless the
      // developer turned them off.
      TRACES_EXPORT: process.env.TRACES_EXPORT === 'off' ? 'off' : 'on',
      ...localWebhooks.env,
      ...signIn.env,
      ...traces?.env,
      ...options.env,
    });
    const spawnOffline = (env: Record<string, string>) => {
      offline = startOffline({ ...inherited, ...env, ...apiProxies, PATH: path }, debug);
      return offline;
    };

    let guessed: Record<string, string> | undefined;
    let child: OfflineProcess | undefined;
    if (cached) {
      try {
        guessed = predictLocalEnv(cached, queueServer.endpoint);
        child = spawnOffline(localEnv(guessed));
        timing('serverless-offline started early (cached osls print)');
      } catch {
        guessed = undefined;
      }
    }

    const config = await printing;
    timing('osls print');
    const resources = await createLocalResources(config, {
      sqs: queueServer.endpoint,
      dynamodb: storeServer.endpoint,
    });
    // The queues the bus's rules feed hold what nothing else keeps (unlike the delivery queues, filled again from
    // the store at every start): on disk, with what the last run left there, before the bus sends them anything.
    queueServer.keepOnDisk(durableQueueNames(config, resources), join(dataDir, 'sqs'));
    timing('queues and tables');
    localWebhooks.bus.answerTo(Object.values(resources.buses).map((bus) => bus.name));
    localWebhooks.bus.route(resources.rules, queueServer.endpoint);
    const secretsPrefix = webhookSecretsPrefixOf(config);
    if (secretsPrefix !== undefined) localWebhooks.useSecretsPrefix(secretsPrefix);
    signal?.throwIfAborted();
    let env = localEnv(resources.env);
    if (!child || !guessed || !sameEntries(guessed, resources.env)) {
      if (child) {
        timing('cached osls print was stale: restarting serverless-offline');
        await child.stop();
      }
      child = spawnOffline(env);
    }
    if (JSON.stringify(config) !== JSON.stringify(cached)) await writeCachedServerlessConfig(config);
    let running = child;

    for (let tries = 1; ; tries++) {
      // Until ready, an exit of offline (or the caller's abort) ends the wait at once.
      const exitedEarly = new AbortController();
      const starting = running;
      starting.exited.then((exit) =>
        exitedEarly.abort(new Error(`serverless-offline ${describeExit(exit)}\n${starting.output().trim()}`)),
      );
      try {
        await waitForHttp(
          `http://127.0.0.1:${port}${readyCheckPath}`,
          options.readyTimeoutMs ?? 60_000,
          signal ? AbortSignal.any([signal, exitedEarly.signal]) : exitedEarly.signal,
        );
        break;
      } catch (error) {
        if (signal?.aborted) throw error;
        const taken = exitedEarly.signal.aborted ? portTakenIn(starting.output()) : undefined;
        if (taken !== undefined && chosenPorts().includes(taken) && tries < PORT_TRIES) {
          process.stderr.write(
            `[local] port ${taken} was taken before serverless-offline bound it: other ports\n`,
          );
          await chooseAgain();
          env = localEnv(resources.env);
          running = spawnOffline(env);
          continue;
        }
        if (exitedEarly.signal.aborted) throw error;
        throw new Error(
          `${(error as Error).message}\nserverless-offline output:\n${starting.output().trim()}`,
        );
      }
    }
    const url = `http://localhost:${port}`;
    timing('serverless-offline answers');
    // Its console signs in back to this API: `<url>/console/callback`, derived from the API's base URL.
    signIn.serveConsoleAt(url);

    const crashed = running.exited.then(
      (exit) => new Error(`serverless-offline ${describeExit(exit)}\n${running.output().trim()}`),
    );
    // Only report exits that stop() did not cause.
    const crashedUnlessStopped = new Promise<Error>((resolve) => {
      crashed.then((error) => {
        if (!stopping) resolve(error);
      });
    });

    const stack: LocalStack = {
      url,
      port,
      sqsEndpoint: queueServer.endpoint,
      dynamoEndpoint: storeServer.endpoint,
      region: localRegion,
      dataDir,
      eventBusUrl: localWebhooks.bus.url,
      webhookReceiverUrl: localWebhooks.receiver.url,
      consoleSignIn: { issuer: signIn.issuer, clientId: signIn.clientId, users: signIn.users },
      env,
      queues: resources.queues,
      tables: resources.tables,
      eventSources: eventSourcesOf(config),
      config,
      offlinePid: running.pid,
      crashed: crashedUnlessStopped,
      stop,
    };

    for (const line of localWebhooks.lines) process.stderr.write(`[local] ${line}\n`);

    // ---- HOOK: re-queue `accepted` records and start the worker poller (see LocalStackOptions.onStarted).
    stopHook = (await options.onStarted?.(stack)) || undefined;
    signal?.throwIfAborted();
    return stack;
  } catch (error) {
    printAbort.abort(error);
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * Where a stack with LOCAL_API_PROXY_* or LOCAL_DELIVERY_PROXY_* set writes its emulators' endpoints:
 * `{"sqs", "dynamodb", "eventbridge"}`.
 */
export const localEndpointsFile = (dataDir: string): string => join(dataDir, 'local-endpoints.json');

/** The API handlers' AWS endpoints when LOCAL_API_PROXY_SQS / LOCAL_API_PROXY_DYNAMODB name a proxy. */
function apiProxyEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    ...(env.LOCAL_API_PROXY_SQS ? { AWS_ENDPOINT_URL_SQS: env.LOCAL_API_PROXY_SQS } : {}),
    ...(env.LOCAL_API_PROXY_DYNAMODB ? { AWS_ENDPOINT_URL_DYNAMODB: env.LOCAL_API_PROXY_DYNAMODB } : {}),
  };
}

/** The rules' target queues and their dead-letter queues, by name. */
function durableQueueNames(config: ResolvedServerlessConfig, resources: LocalResources): string[] {
  const targets = Object.entries(resources.queues).filter(([, queue]) =>
    resources.rules.some((rule) => rule.targets.some((target) => target.queueUrl === queue.url)),
  );
  const deadLetters = targets.flatMap(([id]) => {
    const policy = config.resources?.Resources?.[id]?.Properties?.RedrivePolicy as
      | { deadLetterTargetArn?: { 'Fn::GetAtt'?: [string, string] } }
      | undefined;
    const deadLetterId = policy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0];
    return deadLetterId && resources.queues[deadLetterId] ? [resources.queues[deadLetterId].name] : [];
  });
  return [...targets.map(([, queue]) => queue.name), ...deadLetters];
}

function hasDeliveryProxy(env: NodeJS.ProcessEnv): boolean {
  return Boolean(
    env.LOCAL_DELIVERY_PROXY_SQS || env.LOCAL_DELIVERY_PROXY_DYNAMODB || env.LOCAL_DELIVERY_PROXY_EVENTBRIDGE,
  );
}

function sameEntries(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** serverless-offline starts at most this often when a port chosen for it was taken meanwhile. */
const PORT_TRIES = 3;

/** The port an `EADDRINUSE` in serverless-offline's output names, if any. */
function portTakenIn(output: string): number | undefined {
  const match = /EADDRINUSE: address already in use \S*:(\d+)/.exec(output);
  return match ? Number(match[1]) : undefined;
}

/** Like Promise.all, but waits for every promise to settle before rejecting with the first failure. */
async function allSettled<const T extends readonly unknown[]>(
  promises: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(promises);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
