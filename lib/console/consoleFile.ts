/** One built file of the console's pages (scripts/build-console.ts makes them; lib/console/consoleAssets.ts serves them). */
export interface ConsoleFile {
  /** Its path under /console/: `index.html`, `assets/console-<hash>.js`, `assets/console-<hash>.css`. */
  path: string;
  contentType: string;
  body: string;
}
