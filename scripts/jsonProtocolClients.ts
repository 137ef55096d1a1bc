/**
 * Where lib/aws/jsonProtocol takes the AWS SDK's place: in the API functions' bundles (esbuild, scripts/bundle.ts),
 * in npm start's serverless-offline and the intake benchmark (Node module hooks), and in the test project that
 * runs the intake suites as the bundles run them (vite, vitest.config.ts).
 *
 * Loading one SDK client costs 37-40 ms of cold start (bench/FINDINGS.md), more than the rest of an API handler,
 * and the API functions' callers wait for it. The code keeps importing the SDK packages: their types everywhere,
 * and the SDK itself in the queue workers, the scripts and the tests' own helpers.
 */
import { registerHooks } from 'node:module';
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin as EsbuildPlugin } from 'esbuild';
import { projectRoot } from './local/project.ts';

/** The SDK packages the JSON-protocol clients stand in for, and the modules that do. */
const STAND_INS: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'dynamodb.ts',
  '@aws-sdk/client-sqs': 'sqs.ts',
  '@aws-sdk/client-secrets-manager': 'secretsManager.ts',
};

/** The JSON-protocol module standing in for an SDK package, or undefined. */
export const jsonProtocolModuleFor = (specifier: string): string | undefined =>
  Object.hasOwn(STAND_INS, specifier)
    ? join(projectRoot, 'lib', 'aws', 'jsonProtocol', STAND_INS[specifier])
    : undefined;

/** esbuild: every import of the replaced SDK packages in a bundle (Powertools' included) gets the stand-in. */
export const jsonProtocolClients: EsbuildPlugin = {
  name: 'json-protocol-clients',
  setup(b) {
    b.onResolve({ filter: /^@aws-sdk\/client-/ }, (args) => {
      const path = jsonProtocolModuleFor(args.path);
      return path ? { path } : undefined;
    });
  },
};

const serviceCode = [join(projectRoot, 'lib') + sep, join(projectRoot, 'functions') + sep];

/** The stand-in for an import from lib/ or functions/ (the service code, as bundled), or undefined. */
const standInFor = (specifier: string, importerPath: string | undefined) =>
  importerPath && serviceCode.some((dir) => importerPath.startsWith(dir))
    ? jsonProtocolModuleFor(specifier)
    : undefined;

/**
 * vite (vitest): imports from lib/ and functions/ get the stand-ins; the tests' own helpers keep the SDK, so
 * what they read back from the stand-ins was not read through the code under test.
 */
export const jsonProtocolClientsForTests = {
  name: 'json-protocol-clients',
  enforce: 'pre' as const,
  resolveId: (source: string, importer?: string) => standInFor(source, importer) ?? null,
};

/**
 * Node (module hooks, this thread and the workers it starts after): imports from lib/ and functions/ get the
 * stand-ins, as in the bundles. Call before importing them.
 *
 * @example
 * registerJsonProtocolClients();
 * const { handler } = await import('../functions/salesRegistration.ts');
 */
export const registerJsonProtocolClients = (): void => {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : undefined;
      const standIn = standInFor(specifier, parent);
      return standIn
        ? { url: pathToFileURL(standIn).href, shortCircuit: true }
        : nextResolve(specifier, context);
    },
  });
};
