/**
 * `npm run bundle`: one esbuild bundle per function of serverless.yml (minified ESM, tree-shaken, with a source
 * map), zipped as `.esbuild/<function>.zip`: the package serverless.yml deploys (`package.artifact`), which holds
 * the bundle only, never node_modules. Prints each bundle's size.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';
import { zipSync } from 'fflate';
import { projectRoot } from './local/project.ts';
import { printServerlessConfig } from './local/serverlessConfig.ts';

const outRoot = join(projectRoot, '.esbuild');

/** Bundled ESM still meets CommonJS dependencies (the AWS SDK's) that `require` Node's built-ins. */
const banner =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

export interface BundleResult {
  name: string;
  handler: string;
  zip: string;
  bytes: number;
  zipBytes: number;
}

/**
 * Bundles one handler file to `<outDir>/<name>/functions/<file>.mjs` (+ .map) and zips that folder.
 *
 * @example
 * await bundleFunction('crmCase', 'functions/crmCase.handler');
 */
export const bundleFunction = async (
  name: string,
  handler: string,
  outDir = outRoot,
): Promise<BundleResult> => {
  const source = `${handler.slice(0, handler.lastIndexOf('.'))}`; // functions/crmCase
  const workDir = join(outDir, name);
  await rm(workDir, { recursive: true, force: true });
  const out = await build({
    entryPoints: [join(projectRoot, `${source}.ts`)],
    outfile: join(workDir, `${source}.mjs`),
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
  });
  const files: Record<string, Uint8Array> = {};
  let bytes = 0;
  for (const file of out.outputFiles) {
    const inZip = `${dirname(source)}/${basename(file.path)}`;
    files[inZip] = file.contents;
    if (file.path.endsWith('.mjs')) bytes = file.contents.byteLength;
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
    functions: Record<string, { handler: string }>;
  };
  await mkdir(outDir, { recursive: true });
  return Promise.all(
    Object.entries(config.functions).map(([name, fn]) => bundleFunction(name, fn.handler, outDir)),
  );
};

if (import.meta.main) {
  const results = await bundleAll();
  for (const r of results) {
    console.log(
      `bundle ${r.name.padEnd(18)} ${(r.bytes / 1024).toFixed(0).padStart(5)} KiB  (zip ${(r.zipBytes / 1024).toFixed(0)} KiB)`,
    );
  }
}
