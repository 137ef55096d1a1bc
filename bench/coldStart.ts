/**
 * Cold start: each intake / status bundle as `npm run bundle` builds it (`bundleFunction`), against a bundle of
 * the same handler, built by the same `bundleFunction`, whose generated validators are replaced by ajv compiling
 * the JSON Schemas at start-up (what the build step avoids). Each sample is a fresh Node process that times
 * `await import(bundle)` (module evaluation builds the middy handler).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { type BundleResult, bundleFunction } from '../tools/bundle.ts';
import { baseEnv, median, projectRoot, runNodeJson } from './proc.ts';

/** The API functions, bundled as deployed (their AWS clients are lib/aws/jsonProtocol's, lib/aws/clients.ts). */
export const COLD_START_FUNCTIONS = [
  { name: 'salesRegistration', handler: 'functions/salesRegistration.handler' },
  { name: 'crmCase', handler: 'functions/crmCase.handler' },
  { name: 'recordStatus', handler: 'functions/recordStatus.handler' },
] as const;

export interface ColdStartRow {
  name: string;
  /** Import + handler construction, median of the fresh processes, ms. */
  oursMs: number;
  baselineMs: number;
  oursSamples: number[];
  baselineSamples: number[];
  oursBytes: number;
  oursZipBytes: number;
  baselineBytes: number;
  baselineZipBytes: number;
  /** Schemas the baseline compiles at start-up (0: the handler validates nothing, both bundles are equal). */
  schemasCompiled: number;
}

/** What the generated validator modules would be without the build step: ajv compiling the schema at import. */
const ajvAtStartupModule = (schemaName: string) => `
import AjvImport from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import schema from '../../schemas/${schemaName}.schema.json';
const Ajv = AjvImport.default ?? AjvImport;
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addKeyword({ keyword: 'x-messages', schemaType: 'object' });
ajv.addKeyword({ keyword: 'x-when', schemaType: 'string' });
ajv.addFormat('email', fullFormats.email);
export default ajv.compile(schema);
`;

/** Replaces `./generated/<schema>.js` imported from lib/validation with {@link ajvAtStartupModule}. */
export const ajvAtStartupPlugin = (replaced: string[]): Plugin => ({
  name: 'ajv-at-startup',
  setup(b) {
    const validationDir = join(projectRoot, 'lib', 'validation');
    b.onResolve({ filter: /^\.\/generated\/(salesRegistration|caseRecord)\.js$/ }, (args) => {
      if (args.resolveDir !== validationDir) return undefined;
      const schemaName = basename(args.path, '.js');
      if (!replaced.includes(schemaName)) replaced.push(schemaName);
      return { path: schemaName, namespace: 'ajv-at-startup' };
    });
    b.onLoad({ filter: /.*/, namespace: 'ajv-at-startup' }, (args) => ({
      contents: ajvAtStartupModule(args.path),
      loader: 'js',
      resolveDir: validationDir,
    }));
  },
});

/** The entry file bundleFunction wrote. */
const bundledFile = (result: BundleResult, outDir: string) =>
  join(outDir, result.name, `${result.handler.slice(0, result.handler.lastIndexOf('.'))}.mjs`);

/** The same handler through the same bundleFunction, with the generated validators replaced by ajv at start-up. */
const buildBaseline = async (name: string, handler: string, outDir: string) => {
  const replaced: string[] = [];
  const result = await bundleFunction(`${name}-ajv-at-startup`, handler, outDir, {
    plugins: [ajvAtStartupPlugin(replaced)],
  });
  return { ...result, file: bundledFile(result, outDir), schemasCompiled: replaced.length };
};

/** Times `await import(url)` in this fresh process: the module evaluates and builds its handler. */
const importTimer = `
const started = performance.now();
const module = await import(process.argv[1]);
const ms = performance.now() - started;
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler');
process.stdout.write(JSON.stringify({ ms }) + '\\n');
`;

/** The environment a deployed function starts with (serverless.yml: provider.environment). */
const lambdaLikeEnv = (): NodeJS.ProcessEnv => ({
  ...baseEnv(),
  NODE_OPTIONS: '--enable-source-maps',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_SERVICE_NAME: 'dealer-gateway',
  POWERTOOLS_METRICS_NAMESPACE: 'DealerGateway',
  SALES_REGISTRATION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/000000000000/sales',
  CASE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/000000000000/cases',
  RECORDS_TABLE: 'records',
});

export const timeImport = async (file: string): Promise<number> =>
  (
    await runNodeJson<{ ms: number }>(
      ['--input-type=module', '-e', importTimer, pathToFileURL(file).href],
      lambdaLikeEnv(),
    )
  ).ms;

/**
 * Builds both bundles of each function in a temporary directory and times `samples` fresh imports of each,
 * alternating ours and the baseline so that drift of the machine hits both alike.
 */
export const measureColdStart = async (samples = 7): Promise<ColdStartRow[]> => {
  const outDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-bench-'));
  try {
    const rows: ColdStartRow[] = [];
    for (const { name, handler } of COLD_START_FUNCTIONS) {
      const ours = await bundleFunction(name, handler, outDir);
      const oursFile = bundledFile(ours, outDir);
      const baseline = await buildBaseline(name, handler, outDir);
      // One import each first: the files reach the page cache before any sample counts.
      await timeImport(oursFile);
      await timeImport(baseline.file);
      const oursSamples: number[] = [];
      const baselineSamples: number[] = [];
      for (let i = 0; i < samples; i++) {
        oursSamples.push(await timeImport(oursFile));
        baselineSamples.push(await timeImport(baseline.file));
      }
      rows.push({
        name,
        oursMs: median(oursSamples),
        baselineMs: median(baselineSamples),
        oursSamples,
        baselineSamples,
        oursBytes: ours.bytes,
        oursZipBytes: ours.zipBytes,
        baselineBytes: baseline.bytes,
        baselineZipBytes: baseline.zipBytes,
        schemasCompiled: baseline.schemasCompiled,
      });
    }
    return rows;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
};

if (import.meta.main) {
  console.log(JSON.stringify(await measureColdStart(Number(process.argv[2] ?? 7)), null, 1));
}
