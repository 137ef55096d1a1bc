/**
 * `npm run bundle`: one esbuild bundle per function of serverless.yml (minified ESM, tree-shaken, with a source
 * map), zipped as `.esbuild/<function>.zip`: the package serverless.yml deploys (`package.artifact`), which holds
 * the bundle only, never node_modules. Prints each bundle's size.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { zipSync } from 'fflate';
import { projectRoot } from '../local/project.ts';
import { printServerlessConfig } from '../local/serverlessConfig.ts';

const outRoot = join(projectRoot, '.esbuild');

/** Bundled ESM still meets CommonJS dependencies (the AWS SDK's) that `require` Node's built-ins. */
const banner =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/**
 * Node built-ins reach the bundle through `require` (the banner's createRequire), not ESM `import`: importing
 * `node:http` as ESM makes Node build its ESM facade, which reads every export, including the lazy WebSocket
 * getters, and so loads Node's whole bundled undici at cold start (10-15 ms) though nothing here uses it.
 */
export const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^[a-z:_/]+$/ }, (args) => {
      if (!builtins.has(args.path) || args.namespace === 'builtin-via-require') return undefined;
      if (args.kind === 'require-call') return { path: args.path, external: true };
      return { path: args.path.replace(/^node:/, ''), namespace: 'builtin-via-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-via-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: 'js',
    }));
  },
};

export interface BundleOptions {
  /** Extra esbuild plugins (the benchmarks' baseline builds). */
  plugins?: Plugin[];
}

export interface BundleResult {
  name: string;
  handler: string;
  zip: string;
  bytes: number;
  zipBytes: number;
}

/**
 * Bundles one handler file to `<outDir>/<name>/functions/<file>.mjs` (+ chunks and source maps) and zips that
 * folder.
 *
 * @example
 * await bundleFunction('crmCase', 'functions/crmCase.handler', '.esbuild');
 */
export const bundleFunction = async (
  name: string,
  handler: string,
  outDir = outRoot,
  { plugins = [] }: BundleOptions = {},
): Promise<BundleResult> => {
  const source = `${handler.slice(0, handler.lastIndexOf('.'))}`; // functions/crmCase
  const workDir = join(outDir, name);
  await rm(workDir, { recursive: true, force: true });
  const out = await build({
    entryPoints: { [source]: join(projectRoot, `${source}.ts`) },
    outdir: workDir,
    outExtension: { '.js': '.mjs' },
    // What the AWS SDK loads with dynamic import() (SSO, INI, process and web-identity credential providers, never
    // used on Lambda, where credentials come from the environment) stays in chunks that cold start never reads.
    splitting: true,
    chunkNames: 'functions/chunks/[name]-[hash]',
    bundle: true,
    minify: true,
    treeShaking: true,
    sourcemap: 'external',
    sourcesContent: false,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    mainFields: ['module', 'main'],
    banner: { js: banner },
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
    plugins: [builtinsViaRequire, ...plugins],
  });
  const entry = join(workDir, `${source}.mjs`);
  const files: Record<string, Uint8Array> = {};
  let bytes = 0;
  for (const file of out.outputFiles) {
    files[relative(workDir, file.path)] = file.contents;
    if (file.path === entry) bytes = file.contents.byteLength;
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.contents);
  }
  const zipped = zipSync(files, { level: 9, mtime: new Date('2026-01-01T00:00:00Z') });
  const zip = join(outDir, `${name}.zip`);
  await writeFile(zip, zipped);
  return { name, handler, zip, bytes, zipBytes: zipped.byteLength };
};

/** Bundles every function serverless.yml declares. */
export const bundleAll = async (outDir = outRoot): Promise<BundleResult[]> => {
  const config = (await printServerlessConfig(process.env)) as unknown as {
    functions: Record<string, { handler: string; events?: unknown[] }>;
  };
  await mkdir(outDir, { recursive: true });
  return Promise.all(
    Object.entries(config.functions).map(([name, fn]) => bundleFunction(name, fn.handler, outDir)),
  );
};
