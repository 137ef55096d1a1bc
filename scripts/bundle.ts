/** `npm run bundle`: every function serverless.yml declares, bundled and zipped into .esbuild/ (tools/bundle.ts). */
import { bundleAll } from '../tools/bundle.ts';
import { writeConsoleFiles } from '../tools/consoleBuild.ts';

// The console's files are part of the consoleAssets bundle: built fresh first.
await writeConsoleFiles();

const results = await bundleAll();
for (const r of results) {
  console.log(
    `bundle ${r.name.padEnd(18)} ${(r.bytes / 1024).toFixed(0).padStart(5)} KiB  (zip ${(r.zipBytes / 1024).toFixed(0)} KiB)`,
  );
}
