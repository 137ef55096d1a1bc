/**
 * `npm run build:console`: builds the operations console (console/, tools/consoleBuild.ts) into
 * `lib/console/generated/consoleFiles.js`, the module the consoleAssets function serves. Runs on `npm install`
 * (prepare), before tests and before bundling, as the validators are built.
 */
import { gzippedBytes, writeConsoleFiles } from '../tools/consoleBuild.ts';

const files = await writeConsoleFiles();
console.log(
  `console: ${files.map((f) => f.path).join(', ')} -> lib/console/generated/consoleFiles.js (JS + CSS ${(gzippedBytes(files) / 1024).toFixed(1)} KiB gzipped)`,
);
