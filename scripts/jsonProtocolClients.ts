/**
 * Where lib/aws/jsonProtocol takes the AWS SDK's place: in the API functions' bundles (esbuild, scripts/bundle.ts)
 * in the test project that runs the intake suites as those bundles run them (vite, vitest.config.ts), and in the
 * benchmark that runs the TypeScript handlers as deployed (Node module hooks).
 *
 * Loading one SDK client costs 37-40 ms of cold start (bench/FINDINGS.md), more than the rest of an API handler,
 * and the API functions' callers wait for it. The code keeps importing the SDK packages: their types everywhere,
 * and the SDK itself in the queue workers, the scripts and the tests' own helpers.
 */
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin as EsbuildPlugin } from 'esbuild';
import { projectRoot } from './local/project.ts';

/** The SDK packages the JSON-protocol clients stand in for, and the modules that do. */
const STAND_INS: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'dynamodb.ts',
  '@aws-sdk/client-sqs': 'sqs.ts',
  '@aws-sdk/client-secrets-manager': 'secretsManager.ts',
};
const REPLACED = /^@aws-sdk\/client-(dynamodb|sqs|secrets-manager)$/;

/** The JSON-protocol module standing in for an SDK package, or undefined. */
export const jsonProtocolModuleFor = (specifier: string): string | undefined =>
  STAND_INS[specifier] ? join(projectRoot, 'lib', 'aws', 'jsonProtocol', STAND_INS[specifier]) : undefined;

/** esbuild: every import of the replaced SDK packages in a bundle (Powertools' included) gets the stand-in. */
export const jsonProtocolClients: EsbuildPlugin = {
  name: 'json-protocol-clients',
  setup(b) {
    b.onResolve({ filter: REPLACED }, (args) => ({ path: jsonProtocolModuleFor(args.path) as string }));
  },
};

const serviceCode = [join(projectRoot, 'lib'), join(projectRoot, 'functions')];

/**
 * vite (vitest): imports from lib/ and functions/ get the stand-ins; the tests' own helpers keep the SDK, so
 * what they read back from the stand-ins was not read through the code under test.
 */
export const jsonProtocolClientsForTests = {
  name: 'json-protocol-clients',
  enforce: 'pre' as const,
  resolveId(source: string, importer?: string) {
    if (!REPLACED.test(source) || !importer) return null;
    return serviceCode.some((dir) => importer.startsWith(dir)) ? jsonProtocolModuleFor(source) : null;
  },
};

/**
 * Node (module hooks, this thread): imports from lib/ and functions/ get the stand-ins, as in the bundles, for
 * benchmarks that run the TypeScript handlers as deployed. Call before importing them.
 *
 * @example
 * registerJsonProtocolClients();
 * const { handler } = await import('../functions/salesRegistration.ts');
 */
export const registerJsonProtocolClients = (): void => {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL ? fileURLToPath(context.parentURL) : '';
      const standIn = REPLACED.test(specifier) && serviceCode.some((dir) => parent.startsWith(dir));
      return standIn
        ? { url: pathToFileURL(jsonProtocolModuleFor(specifier) as string).href, shortCircuit: true }
        : nextResolve(specifier, context);
    },
  });
};
