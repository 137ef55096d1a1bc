import { type ChildProcess, fork } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';
import { type Template, withPackageLock } from './packagedTemplate.ts';

/** A function as serverless.yml declares it (`osls print`), the part these helpers read. */
export interface ServerlessFunction {
  handler: string;
  name?: string;
  package?: { artifact?: string | null };
  events?: Record<string, unknown>[];
}

/** One function of serverless.yml, with what the packaged template and the bundles make of it. */
export interface DeployedFunction {
  /** Its key under `functions:` in serverless.yml, e.g. `erpDelivery`. */
  name: string;
  /** serverless.yml's `handler`, e.g. `functions/deliveryWorker.handler`. */
  handler: string;
  /** The TypeScript source of the handler module, from `handler`: `functions/deliveryWorker.ts`. */
  source: string;
  /** The handler module in the bundle (`functions/deliveryWorker.mjs`) and its export. */
  bundleEntry: string;
  exportName: string;
  /** The zip `npm run package` deploys, relative to the project. */
  artifact: string;
  /** In the packaged template: the function's logical id, deployed name, role, timeout, memory, environment. */
  logicalId: string;
  functionName: string;
  roleId: string;
  timeoutSeconds: number;
  memorySize: number;
  environment: Record<string, unknown>;
  /** serverless.yml's event kinds, e.g. `['http']`, `['sqs']`, `['schedule']`. */
  eventKinds: string[];
  /** The queues (template logical ids) of its SQS event source mappings. */
  sqsSources: string[];
}

const projectRoot = join(import.meta.dirname, '..');

/** serverless's logical id of a function (its naming: `erp-delivery` becomes `ErpDashdeliveryLambdaFunction`). */
const functionLogicalId = (name: string): string => {
  const normalised = name.replace(/-/g, 'Dash').replace(/_/g, 'Underscore');
  return `${normalised[0].toUpperCase()}${normalised.slice(1)}LambdaFunction`;
};

const logicalIdIn = (value: unknown): string | undefined => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
};

/**
 * Every function serverless.yml declares, mapped to its handler's source file (from `handler`) and to what the
 * packaged template deploys for it. Throws when the two disagree or a handler file does not exist.
 *
 * @example
 * deployedFunctions(inject('serverlessConfig').functions, template).map((f) => [f.name, f.source]);
 */
export const deployedFunctions = (
  functions: Record<string, ServerlessFunction>,
  template: Template,
): DeployedFunction[] => {
  const inTemplate = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  const declared = Object.entries(functions);
  if (inTemplate.length !== declared.length) {
    throw new Error(
      `serverless.yml declares ${declared.length} functions, the template has ${inTemplate.length}`,
    );
  }
  return declared.map(([name, fn]) => {
    const match = /^(.+)\.([^./]+)$/.exec(fn.handler);
    if (!match) throw new Error(`${name}: handler ${fn.handler} is not <file>.<export>`);
    const [, module, exportName] = match;
    const source = `${module}.ts`;
    if (!existsSync(join(projectRoot, source))) throw new Error(`${name}: ${source} does not exist`);
    const logicalId = functionLogicalId(name);
    const resource = template.Resources[logicalId];
    if (resource?.Type !== 'AWS::Lambda::Function')
      throw new Error(`${name}: no ${logicalId} in the template`);
    const properties = resource.Properties;
    const sqsSources = Object.values(template.Resources)
      .filter(
        (r) =>
          r.Type === 'AWS::Lambda::EventSourceMapping' &&
          logicalIdIn(r.Properties.FunctionName) === logicalId,
      )
      .map((r) => logicalIdIn(r.Properties.EventSourceArn))
      .filter((id): id is string => id !== undefined && template.Resources[id]?.Type === 'AWS::SQS::Queue');
    return {
      name,
      handler: fn.handler,
      source,
      bundleEntry: `${module}.mjs`,
      exportName,
      artifact: fn.package?.artifact ?? `.esbuild/${name}.zip`,
      logicalId,
      functionName: String(properties.FunctionName),
      roleId: String(logicalIdIn(properties.Role)),
      timeoutSeconds: Number(properties.Timeout ?? 6),
      memorySize: Number(properties.MemorySize ?? 1024),
      environment:
        (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
      eventKinds: (fn.events ?? []).flatMap((event) => Object.keys(event)),
      sqsSources,
    };
  });
};

/**
 * Unzips each function's deployed artifact into `<dir>/<name>/`, under the package lock (any test file that
 * packages rewrites the zips).
 */
export const unpackArtifacts = (functions: DeployedFunction[], dir: string): Promise<void> =>
  withPackageLock(async () => {
    for (const fn of functions) {
      const zip = unzipSync(await readFile(join(projectRoot, fn.artifact)));
      for (const [file, bytes] of Object.entries(zip)) {
        if (file.endsWith('/')) continue;
        await mkdir(dirname(join(dir, fn.name, file)), { recursive: true });
        await writeFile(join(dir, fn.name, file), bytes);
      }
    }
  });

/** The environment Lambda gives a function, with its template variables (resolved by the caller). */
export const lambdaEnvironment = (
  fn: DeployedFunction,
  codeDir: string,
  variables: Record<string, string>,
): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  TZ: 'UTC',
  LANG: 'en_US.UTF-8',
  AWS_REGION: 'eu-west-1',
  AWS_DEFAULT_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  LAMBDA_TASK_ROOT: codeDir,
  // No profile of the machine's user may change where calls go or how they are signed.
  AWS_CONFIG_FILE: join(codeDir, 'no-aws-config'),
  AWS_SHARED_CREDENTIALS_FILE: join(codeDir, 'no-aws-credentials'),
  ...variables,
});

export interface LambdaProcess {
  /** Invokes the handler with an event (one invocation at a time, as one execution environment runs them). */
  invoke<T = unknown>(event: unknown): Promise<T>;
  stop(): Promise<void>;
}

const runtime = join(import.meta.dirname, 'lambdaRuntime.ts');

/**
 * Starts one function's deployed code in a Node process of its own (testkit/lambdaRuntime.ts), with
 * exactly the environment given (nothing of the test process's), its output appended to `logFile`.
 *
 * @example
 * const fn = await startLambdaProcess(deployed, join(dir, deployed.name), env, logFile);
 * const answer = await fn.invoke(apiGatewayEvent);
 */
export const startLambdaProcess = async (
  fn: DeployedFunction,
  codeDir: string,
  env: Record<string, string>,
  logFile: string,
): Promise<LambdaProcess> => {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = fork(
    runtime,
    [join(codeDir, fn.bundleEntry), fn.exportName, fn.functionName, String(fn.timeoutSeconds)],
    { cwd: codeDir, env, execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;

  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: { ready?: true; initError?: string }) => {
      if (message.ready) resolve();
      else if (message.initError) reject(new Error(`${fn.name} failed to start: ${message.initError}`));
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${fn.name} exited with ${code} before it was ready`)));
  });
  child.on(
    'message',
    (message: { id?: number; result?: unknown; error?: { name: string; message: string } }) => {
      if (message.id === undefined) return;
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) {
        waiting?.reject(Object.assign(new Error(message.error.message), { name: message.error.name }));
      } else {
        waiting?.resolve(message.result);
      }
    },
  );
  child.once('exit', (code) => {
    for (const { reject } of pending.values()) reject(new Error(`${fn.name} exited with ${code}`));
    pending.clear();
  });

  let queue: Promise<unknown> = Promise.resolve();
  return {
    invoke<T>(event: unknown): Promise<T> {
      const run = () =>
        new Promise<T>((resolve, reject) => {
          const id = nextId++;
          pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
          child.send({ id, event });
        });
      const result = queue.then(run, run);
      queue = result.catch(() => undefined);
      return result;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
      await new Promise<void>((resolve) => log.end(() => resolve()));
    },
  };
};
